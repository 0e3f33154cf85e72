tiles @FILE --entry mm --schedule stream=48
