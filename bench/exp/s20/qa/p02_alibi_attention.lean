import Tilesmith
open Tilesmith

/-- Causal attention with an ALiBi-style linear distance penalty: a slope per head
times the distance `i - j`, built from iota. -/
def alibiAttention (B H N D : Nat) (q k v : Tensor [B, H, N, D]) (slopes : Tensor [H, 1, 1]) :
    Tensor [B, H, N, D] :=
  let i := reshape (iota N) [N, 1]
  let j := reshape (iota N) [1, N]
  let dist := cast (i - j)
  let s := (q ⬝ kᵀ) / sqrt D - slopes * dist
  softmax (select (j ≤ i) s neginf) ⬝ v

/-- Non-causal: a symmetric penalty with abs, a fixed slope. -/
def alibiSym (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=
  let i := cast (reshape (iota N) [N, 1])
  let j := cast (reshape (iota N) [1, N])
  softmax ((q ⬝ kᵀ) * 0.125 - 0.0625 * abs (i - j)) ⬝ v

def alibi_4k := alibiAttention 2 8 4096 128
def alibi_odd := alibiAttention 1 3 100 40
def alibi_sym_1k := alibiSym 1 4 1000 64
