graph examples/transformer_lm.lean --entry transformerLMLoss --size B=2,N=8,V=11,D=16,H=2,F=24,L=2
