verify examples/softmax.lean --entry softmax_16k_8k --trials 1
