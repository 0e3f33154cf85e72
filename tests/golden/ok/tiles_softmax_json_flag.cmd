tiles examples/softmax.lean --entry rowSoftmax --size M=4,N=16 --json
