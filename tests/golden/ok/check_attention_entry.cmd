check examples/attention.lean --entry attention --size B=1,H=2,N=3,D=4
