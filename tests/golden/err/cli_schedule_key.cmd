tiles @FILE --entry mm --schedule stream=64,warps=4
