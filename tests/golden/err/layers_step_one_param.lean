import Tilesmith
open Tilesmith

def f (x : Tensor [2, 3]) : Tensor [2, 3] :=
  layers 2 x (fun h => relu h)
