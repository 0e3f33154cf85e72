import Tilesmith
open Tilesmith

/-- Broadcasts of a row vector, a column, a scalar tensor and numbers. -/
def bcast (M N : Nat) (x : Tensor [M, N]) (r : Tensor [N]) (c : Tensor [M, 1]) (s : Tensor [1, 1]) :
    Tensor [M, N] :=
  (x + r) * c - s / 2 + 3

/-- An outer product by broadcasting, then a row-wise reduction. -/
def outerSum (M N : Nat) (a : Tensor [M]) (b : Tensor [N]) : Tensor [M, 1] :=
  sum (reshape a [M, 1] * reshape b [1, N] + exp (reshape b [1, N]))

/-- A rank-3 broadcast over a middle size-1 axis with a product. -/
def bcast3 (B M K N : Nat) (x : Tensor [B, M, K]) (y : Tensor [B, 1, K]) (W : Tensor [K, N]) :
    Tensor [B, M, N] :=
  (x * y) ⬝ W + sum y

/-- A scalar produced by a full reduction broadcast back. -/
def globalNorm (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  x * rsqrt (sum (sum (x * x)) (dim := 0) / (M * N) + 1e-6)

/-- A number to a tensor power, sizes folded. -/
def powMix (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  x ^ 2 + (abs x + 1) ^ 0.5 - 2 ^ (0 - abs x)

def bcast_big := bcast 4096 4096
def bcast_odd := bcast 37 100
def outer_odd := outerSum 37 1000
def bcast3_odd := bcast3 3 37 100 24
def global_norm_odd := globalNorm 37 100
def global_norm_big := globalNorm 4096 4096
def pow_mix_odd := powMix 37 100
