import Tilesmith
open Tilesmith
def headSoftmax (B H N D : Nat) (x : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=
  softmax x (dim := 1)
def justNum (N : Nat) := sqrt N + 1
def constTensor (x : Tensor [3, 4]) : Tensor [3, 4] := x * 0 + 1
def iotaOnly := cast (reshape (iota 12) [3, 4]) * 2.0
def noInputs := exp (cast (iota 5))
