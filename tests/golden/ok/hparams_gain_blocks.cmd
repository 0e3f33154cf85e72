hparams tests/hparams/models.lean --entry gain_blocks --width D=8 --depth L=2
