graph examples/swiglu_mlp.lean --entry swigluMlp --size M=4,D=8,F=12
