tiles @FILE --entry mm --schedule rows=8192
