import Tilesmith
open Tilesmith

def f (L D : Nat) (x : Tensor [D]) (W : Param [L, D]) : Tensor [D] :=
  layers L x (fun l h acc => h * W[l])
