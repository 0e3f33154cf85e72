train @FILE --entry mlp_digits --steps 0
