import Tilesmith
open Tilesmith

def f (x : Tensor [2, 3]) : Tensor [2, 3] :=
  layers 2 (fun l h => h * 2) x
