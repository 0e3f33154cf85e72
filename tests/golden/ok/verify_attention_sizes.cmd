verify examples/attention.lean --entry attention --size B=2,H=2,N=8,D=4 --trials 2
