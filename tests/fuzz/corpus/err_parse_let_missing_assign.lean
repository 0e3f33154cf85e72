def f (x : Tensor [4]) :=
  let y = exp x
  y
