import Tilesmith
open Tilesmith

/-- Nested folds: L outer layers, each applying the same (per-outer-layer)
weight R times with a learned per-layer residual scale; the weight is used
transposed on odd-depth decoders (tied). -/
def nestedLayers (M D L R : Nat) (x : Tensor [M, D]) (W : Param [L, D, D]) (a : Param [L, 1]) :
    Tensor [M, D] :=
  layers L x (fun l h =>
    let h := layers R h (fun r g => g + a[l] * tanh (g ⬝ W[l]))
    h + relu (h ⬝ W[l]ᵀ) * 0.5)

/-- Its loss: mean of squares of the output. -/
def nestedLoss (M D L R : Nat) (x : Tensor [M, D]) (W : Param [L, D, D]) (a : Param [L, 1]) :
    Tensor [1, 1] :=
  let y := nestedLayers M D L R x W a
  mean (mean (y * y)) (dim := 0)

def nested_odd := nestedLayers 37 45 2 3
def nested_big := nestedLayers 4096 1024 3 2
def nested_loss_odd := nestedLoss 37 45 2 3
def nested_loss_big := nestedLoss 4096 1024 3 2
