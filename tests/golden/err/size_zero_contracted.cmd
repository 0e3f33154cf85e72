verify @FILE --entry mm --size M=4,K=0,N=4
