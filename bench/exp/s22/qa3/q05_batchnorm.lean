import Tilesmith
open Tilesmith

/-- Batch normalization (training mode) over axes 0 and 1 of [B, N, C]: the
statistics per channel over batch and positions, with gain and bias, then a
linear layer. -/
def batchNorm3 (B N C O : Nat) (x : Tensor [B, N, C]) (g b : Param [C]) (W : Param [C, O]) :
    Tensor [B, N, O] :=
  let mu := mean (mean x (dim := 0)) (dim := 1)
  let d := x - mu
  let v := mean (mean (d * d) (dim := 0)) (dim := 1)
  (d * rsqrt (v + 1e-5) * g + b) ⬝ W

/-- Column statistics of a product: z = x W, each column standardized with its
unbiased variance (divide by M - 1), then a per-column sum of squares. -/
def colStdMm (M K N : Nat) (x : Tensor [M, K]) (W : Param [K, N]) : Tensor [1, N] :=
  let z := x ⬝ W
  let d := z - mean z (dim := 0)
  let v := sum (d * d) (dim := 0) / (M - 1)
  sum (abs (d / sqrt (v + 1e-6))) (dim := 0)

def batch_norm3_odd := batchNorm3 3 37 24 45
def batch_norm3_big := batchNorm3 16 1024 1024 1024
def col_std_mm_odd := colStdMm 37 45 24
def col_std_mm_big := colStdMm 4096 1024 2048
