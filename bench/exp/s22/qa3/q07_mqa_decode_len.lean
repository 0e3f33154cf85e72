import Tilesmith
open Tilesmith

/-- Multi-query attention for one decoding step: H query heads share one
key/value head over a long cache of S positions; each sequence of the batch
has its own valid length `len` (positions j ≤ len are attended to, so at least
one position always is). -/
def mqaDecodeLen (B H S D : Nat) (q : Tensor [B, H, D]) (k v : Tensor [B, S, D])
    (len : Index [B, 1, 1]) : Tensor [B, H, D] :=
  let s := (q ⬝ kᵀ) / sqrt D
  let j := reshape (iota S) [1, 1, S]
  softmax (select (j ≤ len) s neginf) ⬝ v

def mqa_decode_len_odd := mqaDecodeLen 3 5 45 24
def mqa_decode_len_big := mqaDecodeLen 8 32 32768 128
