import Tilesmith
open Tilesmith
def r1 (M K N : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) (c s : Tensor [K, 1]) : Tensor [M, N] :=
  aᵀ ⬝ ((c / s) * exp b)
def r2 (M K N : Nat) (a : Tensor [K, M]) (b e : Tensor [K, N]) (c s u : Tensor [K, 1]) : Tensor [M, N] :=
  aᵀ ⬝ ((c / s) * exp (b * u) + e)
def r3 (M K N : Nat) (a : Tensor [K, M]) (b e : Tensor [K, N]) (c s u : Tensor [K, 1]) : Tensor [M, N] :=
  let i := reshape (iota K) [K, 1]
  let j := reshape (iota N) [1, N]
  aᵀ ⬝ (cast (i == j) * 0.5 + (c / s) * exp (b * u * 10.0 - c) + e)
