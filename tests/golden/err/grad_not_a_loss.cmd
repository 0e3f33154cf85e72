grad @FILE --entry layer --size M=4,K=3,N=2
