import Tilesmith
open Tilesmith

/-- Multi-query attention: H query heads, one key/value head; the heads are
folded into the query rows by a reshape. -/
def mqa (B H N D : Nat) (q : Tensor [B, H, N, D]) (k v : Tensor [B, N, D]) : Tensor [B, H, N, D] :=
  let qf := reshape q [B, H * N, D]
  let s := (qf ⬝ kᵀ) / sqrt D
  reshape (softmax s ⬝ v) [B, H, N, D]

/-- Multi-query attention by broadcasting a [B, 1, N, D] key over heads. -/
def mqaBroadcast (B H N D : Nat) (q : Tensor [B, H, N, D]) (k v : Tensor [B, 1, N, D]) : Tensor [B, H, N, D] :=
  softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v

/-- Causal MQA with projections from a model dimension. -/
def mqaProj (B N E H D : Nat) (x : Tensor [B, N, E]) (Wq : Param [E, H * D]) (Wk Wv : Param [E, D])
    (Wo : Param [H * D, E]) : Tensor [B, N, E] :=
  let q := splitHeads B N H D (x ⬝ Wq)
  let k := reshape (x ⬝ Wk) [B, 1, N, D]
  let v := reshape (x ⬝ Wv) [B, 1, N, D]
  let a := softmax (causalMask ((q ⬝ kᵀ) / sqrt D)) ⬝ v
  mergeHeads B N H D a ⬝ Wo

def mqa_4k := mqa 2 16 4096 128
def mqa_odd := mqa 1 3 37 24
def mqa_bc_odd := mqaBroadcast 2 5 100 16
def mqa_proj_small := mqaProj 2 37 64 4 16
