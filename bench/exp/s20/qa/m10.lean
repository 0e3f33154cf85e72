import Tilesmith
open Tilesmith
def avgMin (B N : Nat) (x : Tensor [B, N]) : Tensor [B, N / 10, 1] :=
  let a := mean (reshape x [B, N / 5, 5])
  amin (reshape a [B, N / 10, 2])
def sumMin (x : Tensor [4, 20]) : Tensor [4, 2, 1] :=
  let a := sum (reshape x [4, 4, 5])
  amin (reshape a [4, 2, 2])
def sumMax2 (x : Tensor [4, 8]) : Tensor [4, 2, 1] :=
  amax (reshape (sum (reshape x [4, 4, 2])) [4, 2, 2])
def maxMax (x : Tensor [4, 8]) : Tensor [4, 2, 1] :=
  amax (reshape (amax (reshape x [4, 4, 2])) [4, 2, 2])
def minOnly (x : Tensor [4, 8]) : Tensor [4, 2, 1] :=
  amin (reshape x [4, 2, 4])
def poolLoss (x : Tensor [4, 8]) (W : Param [8, 8]) : Tensor [1, 1] :=
  let p := amax (reshape (sum (reshape (x ⬝ W) [4, 4, 2])) [4, 2, 2])
  reshape (sum (sum p (dim := 1)) (dim := 0)) [1, 1]
