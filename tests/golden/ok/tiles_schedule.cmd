tiles examples/attention.lean --entry attention --size B=1,H=2,N=1024,D=64 --schedule stream=32,rows=128,threads=256,stages=3,splits=1
