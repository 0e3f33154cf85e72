import Tilesmith
open Tilesmith

-- the caret was under the first let's name (5:7); it belongs under the
-- expression that gives the result
def f (x : Tensor [4, 8]) : Tensor [1, 1] :=
  let y := x * 2
  let z := y + 1
  sum z
