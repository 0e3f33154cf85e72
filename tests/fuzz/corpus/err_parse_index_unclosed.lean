def f (L : Nat) (W : Param [L, 4, 4]) (x : Tensor [4, 4]) := x ⬝ W[0
