import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  reshape x [M, N + 1]
def f1 := f 4 5
