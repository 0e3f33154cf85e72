hparams @FILE --entry residualMlpLoss --size I=64,D=64,L=2,C=10 --width B=64
