import Tilesmith
open Tilesmith

/-- A deep layer-normed GELU residual net with a learned temperature softmax readout. -/
def deepNet (B D L C : Nat) (x : Tensor [B, D]) (G Bi : Param [L, D]) (W : Param [L, D, D])
    (Wout : Param [D, C]) (temp : Float := 0.7) : Tensor [B, C] :=
  let h := layers L x (fun l h => h + gelu (layernorm h G[l] Bi[l] ⬝ W[l]))
  softmax ((h ⬝ Wout) / temp)

/-- Its loss: negative log of the probability of the class, squared-error flavour. -/
def deepLoss (B D L C : Nat) (x : Tensor [B, D]) (G Bi : Param [L, D]) (W : Param [L, D, D])
    (Wout : Param [D, C]) (y : Tensor [B, C]) : Tensor [1, 1] :=
  let p := deepNet B D L C x G Bi W Wout
  sum (mean (square (p - y)) (dim := 0))

/-- A min-max normalization per row with amin/amax. -/
def minMax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  (x - amin x) / (amax x - amin x + 1e-6)

/-- Softcapped logits, then top-1 mask (x == max) times softmax. -/
def top1Gate (M D E : Nat) (x : Tensor [M, D]) (Wr : Param [D, E]) : Tensor [M, E] :=
  let logits := softcap (x ⬝ Wr) 30.0
  let p := softmax logits
  select (logits == amax logits) p 0

def deep_odd := deepNet 37 24 3 10
def deep_loss_odd := deepLoss 37 24 3 10
def min_max_odd := minMax 37 1000
def min_max_big := minMax 4096 32000
def top1_odd := top1Gate 37 100 8
def top1_big := top1Gate 4096 4096 64
