def f (x : Tensor [4]) :=
