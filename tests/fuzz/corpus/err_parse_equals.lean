def f (x y : Tensor [4]) := select (x = y) x y
