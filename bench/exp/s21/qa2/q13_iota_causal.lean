import Tilesmith
open Tilesmith

/-- Attention with an additive causal mask built from iota comparisons (0 on and
below the diagonal, a large negative number above), and a sliding window. -/
def iotaCausal (B N D W : Nat) (q k v : Tensor [B, N, D]) : Tensor [B, N, D] :=
  let i := reshape (iota N) [N, 1]
  let j := reshape (iota N) [1, N]
  let keep := cast (j ≤ i) * cast (i - j < W)
  let mask := (1 - keep) * (0 - 1e9)
  softmax ((q ⬝ kᵀ) / sqrt D + mask) ⬝ v

/-- The same with neginf by select. -/
def iotaCausalSel (B N D : Nat) (q k v : Tensor [B, N, D]) : Tensor [B, N, D] :=
  let i := reshape (iota N) [N, 1]
  let j := reshape (iota N) [1, N]
  softmax (select (j > i) neginf ((q ⬝ kᵀ) / sqrt D)) ⬝ v

def iota_causal_odd := iotaCausal 2 37 24 8
def iota_causal_big := iotaCausal 4 4096 128 512
def iota_causal_sel_odd := iotaCausalSel 2 100 16
def iota_causal_sel_big := iotaCausalSel 8 4096 128
