import Tilesmith
open Tilesmith

/-- Causal attention with soft-capped logits (`50 * tanh (s / 50)`) and a
sliding window: position `i` attends to the `W` positions `i - W < j ≤ i`. -/
def softcapWindowAttention (B H N D W : Nat) (q k v : Tensor [B, H, N, D]) :
    Tensor [B, H, N, D] :=
  let s := softcap ((q ⬝ kᵀ) / sqrt D) 50
  let i := reshape (iota N) [N, 1]
  let j := reshape (iota N) [1, N]
  let s := select (j ≤ i) (select (i < j + W) s neginf) neginf
  softmax s ⬝ v

/-- B4 H16 N4096 D128, window 1024. -/
def softcap_window_attention_4k := softcapWindowAttention 4 16 4096 128 1024
