def f (x : Tensor [4, 8]) := reshape x [5, 6]
