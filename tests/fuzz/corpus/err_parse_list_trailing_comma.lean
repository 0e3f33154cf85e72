def f (x : Tensor [8]) := reshape x [2, 4,]
