def f (x : Tensor [4]) :=
  let y := exp x
  sum y
(dim := 0)
