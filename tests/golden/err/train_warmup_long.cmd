train @FILE --entry mlp_digits --steps 5 --warmup 5 --data x=@digits:0-63/16 --data labels=@digits:64
