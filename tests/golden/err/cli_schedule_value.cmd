opt @FILE --entry mm --target triton -o /dev/null --schedule stages=0
