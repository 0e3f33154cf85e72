import Tilesmith
open Tilesmith

def f (x : Tensor [2, 3]) : Tensor [2, 3] :=
  let step h := h * 2
  layers 2 x step
