import Tilesmith
open Tilesmith

def f (x y : Tensor [2, 3]) : Tensor [2, 3] :=
  layers 2 x y
