def f (x y : Tensor [4]) :=
  x +

def g := 1
