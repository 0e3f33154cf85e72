import Tilesmith
open Tilesmith

/-- Cosine-similarity attention (Swin v2 style): queries and keys L2-normalized,
the logits scaled by a learned per-head scale. -/
def cosineAttn (B H N D : Nat) (q k v : Tensor [B, H, N, D]) (tau : Param [H, 1, 1]) :
    Tensor [B, H, N, D] :=
  let qn := q * rsqrt (sum (q * q) + 1e-6)
  let kn := k * rsqrt (sum (k * k) + 1e-6)
  softmax ((qn ⬝ knᵀ) * tau) ⬝ v

def cosine_attn_odd := cosineAttn 2 3 37 24
def cosine_attn_big := cosineAttn 2 8 4096 128
