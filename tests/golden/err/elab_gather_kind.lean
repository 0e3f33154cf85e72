def f (x : Tensor [4, 8]) (i : Tensor [4, 1]) := gather x i
