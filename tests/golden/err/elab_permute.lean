def f (x : Tensor [4, 8, 2]) := permute x [0, 0, 1]
