tune examples/attention.lean --entry attention --size B=1,H=2,N=1024,D=64 --top 2 -o build/golden_tune
