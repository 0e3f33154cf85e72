graph examples/layernorm.lean --entry rowLayernorm --size M=4,N=16
