tiles examples/matmul_large_k.lean --entry matmul_256_k131072 --schedule copy=1
