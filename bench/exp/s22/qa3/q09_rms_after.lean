import Tilesmith
open Tilesmith

/-- RMSNorm whose row scale and gain are applied after the matmul: the
statistic is taken on x, but x itself goes into the product unnormalized
(the scale commutes with the product). -/
def rmsAfter (M D N : Nat) (x : Tensor [M, D]) (W : Param [D, N]) (g : Param [N]) :
    Tensor [M, N] :=
  let r := rsqrt (mean (x * x) + 1e-6)
  (x ⬝ W) * r * g

/-- Both: the gain of the RMSNorm folded into the weight's rows
(diag(g) W), and SiLU after. -/
def rmsGainRows (M D N : Nat) (x : Tensor [M, D]) (W : Param [D, N]) (g : Param [D, 1]) :
    Tensor [M, N] :=
  let xn := x * rsqrt (mean (x * x) + 1e-6)
  silu (xn ⬝ (g * W))

def rms_after_odd := rmsAfter 37 45 24
def rms_after_big := rmsAfter 4096 4096 4096
def rms_gain_rows_odd := rmsGainRows 37 45 24
def rms_gain_rows_big := rmsGainRows 4096 2048 4096
