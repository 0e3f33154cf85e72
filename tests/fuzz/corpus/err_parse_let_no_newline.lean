def f (x : Tensor [4]) :=
  let y := exp x in y + 1
