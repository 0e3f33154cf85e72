graph examples/causal_attention.lean --entry causalAttention --size B=2,H=2,N=8,D=4
