def f (x : Tensor [4]) :=
  exp (x + 1

def g := 2
