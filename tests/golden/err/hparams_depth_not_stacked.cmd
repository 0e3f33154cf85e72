hparams @FILE --entry mlp_lm --width D=16 --depth V=32
