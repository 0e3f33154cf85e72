hparams tests/hparams/models.lean --entry scaled_matrices --width D=8
