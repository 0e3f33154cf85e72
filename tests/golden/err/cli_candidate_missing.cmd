tiles @FILE --entry mm --candidate 6
