import Tilesmith
open Tilesmith

/-- Grouped-query attention for one decoding step: `H` query heads share `Hkv`
key/value heads (query head `h` reads kv head `h / (H / Hkv)`), one query per
head against a cache of `S` positions, head dimension `D`. -/
def gqaDecode (B H Hkv S D : Nat) (q : Tensor [B, H, D]) (k v : Tensor [B, Hkv, S, D]) :
    Tensor [B, H, D] :=
  let qg := reshape q [B, Hkv, H / Hkv, D]
  let s := (qg ⬝ kᵀ) / sqrt D
  reshape (softmax s ⬝ v) [B, H, D]

/-- B8, 32 query heads over 8 kv heads, S16384, D128. -/
def gqa_decode_b8 := gqaDecode 8 32 8 16384 128

/-- Batch 1: 32 query heads over 8 kv heads, S16384, D128. -/
def gqa_decode_b1 := gqaDecode 1 32 8 16384 128
