def f (x : Tensor [4]) := (x).exp.sum
