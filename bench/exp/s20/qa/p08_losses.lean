import Tilesmith
open Tilesmith

/-- Mean squared error of a linear regression. -/
def mseLoss (M K N : Nat) (x : Tensor [M, K]) (W : Param [K, N]) (b : Param [N]) (y : Tensor [M, N]) :
    Tensor [1, 1] :=
  let r := x ⬝ W + b - y
  sum (sum (r * r) (dim := 0)) / (M * N)

/-- Cross-entropy written by hand with logSoftmax and gather. -/
def handCE (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V]) (t : Index [M]) : Tensor [1, 1] :=
  let lp := logSoftmax (h ⬝ W)
  let picked := gather lp (reshape t [M, 1])
  0 - mean picked (dim := 0)

/-- Huber loss with select. -/
def huber (M N : Nat) (x : Tensor [M, N]) (W : Param [N, N]) (y : Tensor [M, N]) : Tensor [1, 1] :=
  let r := x ⬝ W - y
  let a := abs r
  let l := select (a < 1.0) (0.5 * r * r) (a - 0.5)
  mean (mean l (dim := 0))

/-- Binary cross-entropy with logits (stable form) via softplus. -/
def bceLogits (M K : Nat) (x : Tensor [M, K]) (w : Param [K, 1]) (y : Tensor [M, 1]) : Tensor [1, 1] :=
  let z := x ⬝ w
  mean (softplus z - y * z) (dim := 0)

/-- Cross-entropy with label smoothing via a one-hot from iota. -/
def smoothCE (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V]) (t : Index [M]) : Tensor [1, 1] :=
  let lp := logSoftmax (h ⬝ W)
  let oh := cast (reshape (iota V) [1, V] == reshape t [M, 1])
  let q := 0.9 * oh + 0.1 / V
  0 - mean (sum (q * lp)) (dim := 0)

def mse_big := mseLoss 4096 1024 512
def mse_odd := mseLoss 37 100 3
def hand_ce_odd := handCE 37 24 1000
def hand_ce_big := handCE 4096 1024 32000
def huber_odd := huber 37 100
def bce_odd := bceLogits 100 37
def smooth_ce_odd := smoothCE 37 24 100
