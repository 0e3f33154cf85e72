graph examples/mlp_classifier.lean --entry residualMlpLoss --size B=4,I=6,D=8,L=3,C=5
