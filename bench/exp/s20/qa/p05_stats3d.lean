import Tilesmith
open Tilesmith

/-- Instance-norm-like: mean and variance over the middle axis of [B, C, L]. -/
def midNorm (B C L : Nat) (x : Tensor [B, C, L]) (g : Param [1, L]) : Tensor [B, C, L] :=
  let m := mean x (dim := 1)
  let v := var x (dim := 1)
  (x - m) * rsqrt (v + 1e-5) * g

/-- Batch-norm-like over axis 0 then a product. -/
def batchNormMm (M K N : Nat) (x : Tensor [M, K]) (W : Param [K, N]) : Tensor [M, N] :=
  let m := mean x (dim := 0)
  let s := sqrt (var x (dim := 0) + 1e-5)
  ((x - m) / s) ⬝ W

/-- Variance over the first axis of a 3-D tensor, then summed over the last. -/
def varFirst (A B C : Nat) (x : Tensor [A, B, C]) : Tensor [1, B, 1] :=
  sum (var x (dim := 0)) (dim := -1)

def mid_norm_big := midNorm 16 4096 256
def mid_norm_odd := midNorm 3 37 100
def bn_mm_odd := batchNormMm 100 37 300
def var_first_odd := varFirst 37 5 100
