import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, 1] :=
  slice x (dim := 1) 3 2
def f1 := f 4 5
