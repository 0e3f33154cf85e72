hparams tests/hparams/models.lean --entry tied_lm --width D=16
