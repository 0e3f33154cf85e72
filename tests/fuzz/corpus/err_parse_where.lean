def f (x : Tensor [4]) := g x
  where g y := y + 1
