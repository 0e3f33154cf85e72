def f (x : Tensor [2, 3]) := exp x
