import Tilesmith
open Tilesmith

/-- Softmax over each row of an `M×N` matrix. -/
def rowSoftmax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  softmax x

/-- 16384×8192. -/
def softmax_16k_8k := rowSoftmax 16384 8192
