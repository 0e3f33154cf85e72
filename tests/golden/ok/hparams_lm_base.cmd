hparams examples/transformer_lm.lean --entry lm_small --width D
