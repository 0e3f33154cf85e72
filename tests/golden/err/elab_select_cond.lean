def f (x : Tensor [4]) := select x x x
