import Tilesmith
open Tilesmith

/-- Layer norm without affine parameters, then scaled by a learned vector and
projected. -/
def lnScale (M D N : Nat) (x : Tensor [M, D]) (s : Param [D]) (W : Param [D, N]) : Tensor [M, N] :=
  let mu := mean x
  let d := x - mu
  let y := d * rsqrt (mean (d * d) + 1e-5) * s
  y ⬝ W

/-- A sum-of-squares regression loss with an L2 weight-decay term. -/
def ssqWd (M D N : Nat) (x : Tensor [M, D]) (W : Param [D, N]) (b : Param [N]) (y : Tensor [M, N]) :
    Tensor [1, 1] :=
  let r := x ⬝ W + b - y
  0.5 * sum (sum (r * r) (dim := 0)) + 0.01 * sum (sum (W * W) (dim := 0))

def ln_scale_odd := lnScale 37 100 300
def ln_scale_big := lnScale 4096 4096 1024
def ssq_wd_odd := ssqWd 37 100 3
def ssq_wd_big := ssqWd 4096 1024 1024
