import Tilesmith
open Tilesmith

-- a partial application where a tensor is meant: the message names the
-- argument still missing
def g (a b : Tensor [2, 2]) : Tensor [2, 2] := a + b
def f (x : Tensor [2, 2]) : Tensor [2, 2] := g x
