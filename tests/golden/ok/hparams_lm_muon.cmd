hparams examples/transformer_lm.lean --entry lm_small --width D=128,F=352 --depth L=2 --optimizer auto
