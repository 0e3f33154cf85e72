hparams tests/hparams/models.lean --entry mlp_lm --width D=16 --depth L=1 --alpha 0.5 --json
