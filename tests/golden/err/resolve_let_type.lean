import Tilesmith
open Tilesmith

def u (N : Nat) (x : Tensor [N]) : Tensor [N] :=
  let y : Tensor [M] := x
  y
