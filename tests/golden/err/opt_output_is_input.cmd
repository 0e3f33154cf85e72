opt @FILE --entry softmax_4k --target triton -o @FILE
