import Tilesmith
open Tilesmith

def u (N : Nat) (x : Tensor [N]) : Tensor [N] :=
  let f := fun y => y * 2
  f x + y
