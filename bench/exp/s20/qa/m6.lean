import Tilesmith
open Tilesmith
def scaledRight (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) (s : Tensor [K, 1]) : Tensor [M, N] :=
  a ⬝ (b / s)
def scaledRightT (M K N : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) (s : Tensor [K, 1]) : Tensor [M, N] :=
  aᵀ ⬝ (b / s)
def scaledRightExp (M K N : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) (s : Tensor [K, 1]) (u : Tensor [K, 1]) : Tensor [M, N] :=
  aᵀ ⬝ (exp (b * u) / s + b)
