graph examples/bias_gelu_residual.lean --entry biasGeluResidual --size M=4,N=16
