def f (x : Tensor [4]) := x + [1, 2]
