import Tilesmith
open Tilesmith

def total (M : Nat) (x : Tensor [M, 4]) : Tensor [1, 1] :=
  sum (sum x) (dim := 0)
