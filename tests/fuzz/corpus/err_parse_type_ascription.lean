def f (x : Tensor [4]) := (x : Tensor [4])
