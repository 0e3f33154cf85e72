train @FILE --entry mlp_digits --data nope=x.npy
