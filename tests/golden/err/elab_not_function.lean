def f (x : Tensor [4]) := let y := 3; y x
