import Tilesmith
open Tilesmith

/-- A one-layer regression loss: mean squared error of tanh (x ⬝ w + b). -/
def mseLoss (M K N : Nat) (x : Tensor [M, K]) (y : Tensor [M, N]) (w : Param [K, N]) (b : Param [N]) :
    Tensor [1, 1] :=
  mean (mean ((tanh (x ⬝ w + b) - y) * (tanh (x ⬝ w + b) - y))) (dim := 0)
