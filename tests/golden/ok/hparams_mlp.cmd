hparams examples/mlp_classifier.lean --entry mlp_digits --width D=64 --depth L=2
