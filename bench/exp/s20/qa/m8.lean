import Tilesmith
open Tilesmith
def r4 (M K N : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) (c : Tensor [K, 1]) : Tensor [M, N] :=
  aᵀ ⬝ (c * exp (b - c))
def r5 (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) (c : Tensor [K, 1]) : Tensor [M, N] :=
  a ⬝ (c * exp (b - c))
def r6 (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) (c : Tensor [K, 1]) : Tensor [M, N] :=
  a ⬝ (c * b + c)
