import Tilesmith
open Tilesmith

/-- Squared-ReLU MLP (Primer): relu(x W1 + b1)^2 W2, with a residual. -/
def sqReluMlp (M D F : Nat) (x : Tensor [M, D]) (W1 : Param [D, F]) (b1 : Param [F])
    (W2 : Param [F, D]) : Tensor [M, D] :=
  let u := relu (x ⬝ W1 + b1)
  x + (u * u) ⬝ W2

/-- A tied-weight autoencoder: encode with W, decode with Wᵀ, plus a
reconstruction mean-square loss. -/
def tiedAutoencoderLoss (M D F : Nat) (x : Tensor [M, D]) (W : Param [D, F]) (b : Param [F])
    (c : Param [D]) : Tensor [1, 1] :=
  let z := relu (x ⬝ W + b)
  let r := z ⬝ Wᵀ + c
  let d := r - x
  mean (mean (d * d)) (dim := 0)

def sq_relu_odd := sqReluMlp 37 45 24
def sq_relu_big := sqReluMlp 4096 1024 4096
def tied_ae_odd := tiedAutoencoderLoss 37 45 24
def tied_ae_big := tiedAutoencoderLoss 4096 1024 2048
