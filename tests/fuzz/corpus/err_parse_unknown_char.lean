def f (x : Tensor [4]) := (exp ∘ log) x
