train @FILE --entry residualMlp --size B=64,I=64,C=10,L=2,D=64 --data x=/nonexistent/x.npy --steps 5 --lr 1e-3
