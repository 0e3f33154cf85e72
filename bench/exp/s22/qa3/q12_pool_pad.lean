import Tilesmith
open Tilesmith

/-- Max-pool over time of a projection, then a linear classifier, with a
padding mask (1 valid, 0 pad) given as a float tensor: padded positions are
excluded from the max by select with neginf; position 0 is always kept. -/
def maxPoolPad (B N D E C : Nat) (x : Tensor [B, N, D]) (W1 : Param [D, E]) (W2 : Param [E, C])
    (pad : Tensor [B, N, 1]) : Tensor [B, C] :=
  let h := tanh (x ⬝ W1)
  let p := reshape (iota N) [1, N, 1]
  let keep := (pad > 0.5) 
  let hm := select keep h neginf
  let hm := select (p == 0) h hm
  reshape (amax hm (dim := 1)) [B, E] ⬝ W2

/-- Attention with a key padding mask given as a float tensor [B, 1, N] (keys
with pad > 0.5 kept, key 0 always kept), then a loss mixing a mean-square and
an L1 term against a target. -/
def padAttnLoss (B N D : Nat) (q k v y : Tensor [B, N, D]) (pad : Tensor [B, 1, N]) :
    Tensor [1, 1] :=
  let s := (q ⬝ kᵀ) / sqrt D
  let j := reshape (iota N) [1, 1, N]
  let keep := cast (pad > 0.5) + cast (j == 0)
  let o := softmax (select (keep > 0.5) s neginf) ⬝ v
  let d := reshape (o - y) [B * N, D]
  let l := mean (mean (d * d) + 0.1 * mean (abs d)) (dim := 0)
  l

def max_pool_pad_odd := maxPoolPad 3 37 24 45 10
def max_pool_pad_big := maxPoolPad 64 1024 1024 1024 1000
def pad_attn_loss_odd := padAttnLoss 3 37 24
def pad_attn_loss_big := padAttnLoss 8 2048 128
