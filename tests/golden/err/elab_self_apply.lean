def f (x : Tensor [4]) := (fun g => g g) (fun g => g g)
