train @FILE --entry mlp_digits --batch 32 --data x=@digits:0-63/16 --data labels=@digits:64 --steps 2
