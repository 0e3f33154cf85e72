import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  permute x [0, 0]
def f1 := f 4 5
