def f (x : Tensor [4, 8]) (i : Index [4, 1]) := gather x i
