hparams tests/hparams/models.lean --entry bias_blocks --width D=16,F=32 --depth L=2
