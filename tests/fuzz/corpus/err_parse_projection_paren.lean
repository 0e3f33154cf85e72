def f (x : Tensor [4]) := (exp x).sum
