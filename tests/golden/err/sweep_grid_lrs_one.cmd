sweep @FILE --entry residualMlpLoss --size B=64,I=64,C=10,L=2 --width D=64 --widths 8 --lrs 1e-2 --data x=@digits:0-63/16 --data labels=@digits:64 --steps 5 --csv /tmp/ts_golden_never_written.csv
