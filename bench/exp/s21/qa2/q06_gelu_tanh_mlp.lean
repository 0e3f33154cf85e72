import Tilesmith
open Tilesmith

/-- A pre-norm Transformer MLP block with GELU's tanh form written out and a
residual connection. -/
def tanhMlp (M D F : Nat) (x : Tensor [M, D]) (g b : Param [D]) (W1 : Param [D, F])
    (b1 : Param [F]) (W2 : Param [F, D]) (b2 : Param [D]) : Tensor [M, D] :=
  let h := layernorm x g b
  let u := h ⬝ W1 + b1
  let a := 0.5 * u * (1 + tanh (0.7978845608 * (u + 0.044715 * u ^ 3)))
  x + a ⬝ W2 + b2

def tanh_mlp_odd := tanhMlp 37 100 300
def tanh_mlp_big := tanhMlp 4096 1024 4096
