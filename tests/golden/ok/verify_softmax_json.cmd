verify examples/softmax.lean --entry rowSoftmax --size M=4,N=16 --trials 1 --format json
