def f (x : Tensor) := x
