import Tilesmith
open Tilesmith

/-- QK-norm attention: q and k projected from x, split into heads, each head's
q and k RMS-normalized with its own gain over the head dimension, then causal
attention, heads merged and projected out. -/
def qkNormAttn (B N H Dh : Nat) (x : Tensor [B, N, H * Dh])
    (Wq Wk Wv Wo : Param [H * Dh, H * Dh]) (gq gk : Param [Dh]) : Tensor [B, N, H * Dh] :=
  let q := rmsnorm (splitHeads B N H Dh (x ⬝ Wq)) gq
  let k := rmsnorm (splitHeads B N H Dh (x ⬝ Wk)) gk
  let v := splitHeads B N H Dh (x ⬝ Wv)
  let a := softmax (causalMask ((q ⬝ kᵀ) / sqrt Dh)) ⬝ v
  mergeHeads B N H Dh a ⬝ Wo

/-- The same block trained with a mean-square loss against a target. -/
def qkNormLoss (B N H Dh : Nat) (x y : Tensor [B, N, H * Dh])
    (Wq Wk Wv Wo : Param [H * Dh, H * Dh]) (gq gk : Param [Dh]) : Tensor [1, 1] :=
  let o := qkNormAttn B N H Dh x Wq Wk Wv Wo gq gk
  let d := reshape (o - y) [B * N, H * Dh]
  mean (mean (d * d)) (dim := 0)

def qk_norm_odd := qkNormAttn 2 37 3 8
def qk_norm_big := qkNormAttn 4 2048 16 64
def qk_norm_loss_odd := qkNormLoss 2 37 3 8
def qk_norm_loss_big := qkNormLoss 2 1024 8 64
