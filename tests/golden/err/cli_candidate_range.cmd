tiles @FILE --entry mm --candidate 0
