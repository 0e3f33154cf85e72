def f (x : Tensor [4, 4]) := sum x (dim := 1
