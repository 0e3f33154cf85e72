train @FILE --entry mlp_digits --param derived
