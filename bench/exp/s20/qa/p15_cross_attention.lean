import Tilesmith
open Tilesmith

/-- Cross-attention from Nq queries to Nk keys with a key-padding mask from per-batch lengths. -/
def crossAttn (B H Nq Nk D : Nat) (q : Tensor [B, H, Nq, D]) (k v : Tensor [B, H, Nk, D])
    (len : Index [B]) : Tensor [B, H, Nq, D] :=
  let j := reshape (iota Nk) [1, 1, 1, Nk]
  let l := reshape len [B, 1, 1, 1]
  softmax (select (j < l) ((q ⬝ kᵀ) / sqrt D) (-1e9)) ⬝ v

/-- Local attention: i and j in the same chunk of C, with a relative offset mask using Int division of a difference. -/
def chunkRel (B N D C : Nat) (q k v : Tensor [B, N, D]) : Tensor [B, N, D] :=
  let i := reshape (iota N) [N, 1]
  let j := reshape (iota N) [1, N]
  let m := ((i - j) / C == 0)
  softmax (select m ((q ⬝ kᵀ) / sqrt D) neginf) ⬝ v

/-- Attention with a multiplicative dropout-like mask given as an input, normalized after. -/
def maskedProb (B N D : Nat) (q k v : Tensor [B, N, D]) (keep : Tensor [B, N, N]) : Tensor [B, N, D] :=
  let p := softmax ((q ⬝ kᵀ) * 0.25)
  (p * keep * 1.25) ⬝ v

/-- Decode: one query row per batch against a long cache, with a bias vector. -/
def decodeBias (B S D : Nat) (q : Tensor [B, 1, D]) (k v : Tensor [B, S, D]) (bias : Tensor [S]) : Tensor [B, 1, D] :=
  softmax ((q ⬝ kᵀ) / sqrt D + bias) ⬝ v

def cross_odd := crossAttn 2 3 37 100 24
def cross_big := crossAttn 4 16 1024 4096 128
def chunk_rel_odd := chunkRel 2 100 16 7
def chunk_rel_big := chunkRel 8 4096 128 256
def masked_prob_odd := maskedProb 2 37 16
def decode_bias_odd := decodeBias 3 1000 64
def decode_bias_big := decodeBias 16 32768 128
