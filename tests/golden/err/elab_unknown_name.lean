import Tilesmith
open Tilesmith

def f (x : Tensor [4, 8]) : Tensor [4, 8] :=
  let y := sofmax x
  y
