hparams examples/mlp_classifier.lean --entry residualMlpLoss --size B=4,I=6,D=8,L=1,C=3 --width D=8 --depth L=2 --json
