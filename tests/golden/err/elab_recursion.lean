def f (x : Tensor [4]) := f x
