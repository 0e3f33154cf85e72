def f (x : Tensor [4, 8]) (y : Tensor [4, 7]) := x + y
