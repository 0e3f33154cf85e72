def f (N : Nat) (x : Tensor [N]) := x
