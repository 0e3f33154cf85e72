hparams @FILE --entry mlp_digits
