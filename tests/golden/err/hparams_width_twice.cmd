hparams @FILE --entry mlp_lm --width D=16,D=32
