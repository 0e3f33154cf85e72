def f (x : Tensor [4]) :=
  let := exp x
  x
