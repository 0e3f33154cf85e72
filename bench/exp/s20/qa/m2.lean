import Tilesmith
open Tilesmith
def biasLoss (M K N : Nat) (x : Tensor [M, K]) (W : Param [K, N]) (b : Param [N]) : Tensor [1, 1] :=
  sum (sum (square (x ⬝ W + b))) (dim := 0)
def biasOnly (M N : Nat) (x : Tensor [M, N]) (b : Param [N]) : Tensor [1, 1] :=
  sum (sum (square (x + b))) (dim := 0)
def colSum (M N : Nat) (x : Tensor [M, N]) (y : Tensor [M, N]) : Tensor [1, N] :=
  sum (x * y) (dim := 0)
