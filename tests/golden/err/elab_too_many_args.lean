def f (x : Tensor [4, 8]) := exp x x
