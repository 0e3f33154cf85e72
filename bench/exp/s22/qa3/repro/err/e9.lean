import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) (i : Index [M, 1]) : Tensor [M, N] :=
  x + i
def f1 := f 4 5
