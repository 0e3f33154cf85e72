def f (x : Tensor [4]) := (x < 0) + 1
