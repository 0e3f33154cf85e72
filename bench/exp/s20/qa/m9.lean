import Tilesmith
open Tilesmith
def colSumMm (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [1, N] :=
  sum (a ⬝ b) (dim := 0)
