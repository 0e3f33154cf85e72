graph examples/gqa_decode.lean --entry gqaDecode --size B=2,H=4,Hkv=2,S=8,D=4
