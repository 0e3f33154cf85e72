import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N / 2] :=
  x
def f1 := f 4 5
