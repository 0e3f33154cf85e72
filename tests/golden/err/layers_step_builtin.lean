import Tilesmith
open Tilesmith

def f (L D : Nat) (x : Tensor [D]) : Tensor [D] :=
  layers L x relu
