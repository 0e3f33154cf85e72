hparams @FILE --entry mlp_digits --width Q=64
