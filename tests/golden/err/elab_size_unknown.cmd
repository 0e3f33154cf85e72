check @FILE --entry f --size N=2,M=3
