import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) (t : Tensor [M, 1]) : Tensor [M, 1] :=
  gather x t
def f1 := f 4 5
