train @FILE --entry residualMlpLoss --size B=16,I=64,D=64,L=2,C=10 --batch 32 --data x=@digits:0-63/16 --data labels=@digits:64 --steps 2
