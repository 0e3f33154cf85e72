graph examples/transformer_block.lean --entry transformerBlock --size B=2,N=8,D=16,H=4,F=24
