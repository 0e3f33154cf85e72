import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  softmax x (dim := 2)
def f1 := f 4 5
