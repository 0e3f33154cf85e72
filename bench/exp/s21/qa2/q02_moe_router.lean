import Tilesmith
open Tilesmith

/-- A dense mixture of experts: softmax router over E experts, a top-1 mask
written with amax, each expert a ReLU projection, outputs mixed by the masked
gate. -/
def moeTop1 (M D E F : Nat) (x : Tensor [M, D]) (Wr : Param [D, E]) (We : Param [E, D, F]) :
    Tensor [M, F] :=
  let p := softmax (x ⬝ Wr)
  let top := cast (p == amax p)
  let g := p * top
  let h := relu (reshape x [1, M, D] ⬝ We)
  let gE := reshape (permute g [1, 0]) [E, M, 1]
  reshape (sum (h * gE) (dim := 0)) [M, F]

/-- The router's load-balancing auxiliary loss (Switch Transformer): E times the
dot product of the fraction of tokens routed to each expert and the mean router
probability. -/
def moeAuxLoss (M D E : Nat) (x : Tensor [M, D]) (Wr : Param [D, E]) : Tensor [1, 1] :=
  let p := softmax (x ⬝ Wr)
  let top := cast (p == amax p)
  let f := mean top (dim := 0)
  let P := mean p (dim := 0)
  sum (f * P) * E

def moe_top1_odd := moeTop1 37 100 5 24
def moe_top1_big := moeTop1 2048 1024 8 1024
def moe_aux_odd := moeAuxLoss 37 100 5
def moe_aux_big := moeAuxLoss 4096 1024 64
