hparams @FILE --entry mlp_digits --width D=0
