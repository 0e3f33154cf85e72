check @FILE --entry softmax_8k
