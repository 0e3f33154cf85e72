graph examples/rmsnorm_matmul.lean --entry rmsnormMatmul --size M=4,K=8,N=6
