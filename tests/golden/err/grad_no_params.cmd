grad @FILE --entry total --size M=3
