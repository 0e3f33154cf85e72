def f (x : Tensor [5]) := x.exp
