verify @FILE --entry mergedHeads --size N=1024,H=8,Dh=128,D=1024 --trials 1
