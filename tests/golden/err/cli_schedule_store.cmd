opt @FILE --entry mm --target tilelang -o /dev/null --schedule copy=1,store=2
