graph examples/rmsnorm.lean --entry rowRmsnorm --size M=4,N=16
