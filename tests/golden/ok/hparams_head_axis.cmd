hparams tests/hparams/models.lean --entry head_axis --width D=16,H=2
