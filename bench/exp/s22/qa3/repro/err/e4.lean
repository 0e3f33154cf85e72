import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) (W : Param [2, N, N]) : Tensor [M, N] :=
  x ⬝ W[3]
def f1 := f 4 5
