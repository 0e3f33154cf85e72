import Tilesmith
open Tilesmith

/-- A GELU (tanh) MLP block with biases and a residual connection. -/
def geluMlp (M D F : Nat) (x : Tensor [M, D]) (W1 : Param [D, F]) (b1 : Param [F])
    (W2 : Param [F, D]) (b2 : Param [D]) : Tensor [M, D] :=
  let h := geluTanh (x ⬝ W1 + b1)
  x + (h ⬝ W2 + b2)

/-- The same with exact GELU and a scale on the residual branch. -/
def geluMlpScaled (M D F : Nat) (x : Tensor [M, D]) (W1 : Param [D, F]) (b1 : Param [F])
    (W2 : Param [F, D]) : Tensor [M, D] :=
  x + 0.5 * (gelu (linearBias x W1 b1) ⬝ W2)

/-- A squared-error loss of the block against a target. -/
def geluMlpLoss (M D F : Nat) (x y : Tensor [M, D]) (W1 : Param [D, F]) (b1 : Param [F])
    (W2 : Param [F, D]) (b2 : Param [D]) : Tensor [1, 1] :=
  let r := geluMlp M D F x W1 b1 W2 b2 - y
  mean (mean (square r) (dim := 1)) (dim := 0)

def gelu_mlp_big := geluMlp 4096 1024 4096
def gelu_mlp_odd := geluMlp 37 100 300
def gelu_mlp_scaled_odd := geluMlpScaled 100 37 1000
def gelu_mlp_loss_small := geluMlpLoss 37 24 40
