train @FILE --entry mlp_digits --data x=/nonexistent/digits.npy --data labels=@digits:64 --steps 2
