import Tilesmith
open Tilesmith

/-- Rotary embedding with slice and concat, half-split style. -/
def rope {B N : Nat} (D : Nat) (x : Tensor [B, N, D]) (c s : Tensor [N, D / 2]) : Tensor [B, N, D] :=
  let x1 := slice x 0 (D / 2)
  let x2 := slice x (D / 2) D
  concat [x1 * c - x2 * s, x2 * c + x1 * s] (dim := -1)

/-- Attention with RoPE applied to q and k. -/
def ropeAttention (B N D : Nat) (q k v : Tensor [B, N, D]) (c s : Tensor [N, D / 2]) : Tensor [B, N, D] :=
  let q := rope D q c s
  let k := rope D k c s
  softmax (causalMask ((q ⬝ kᵀ) / sqrt D)) ⬝ v

/-- Concat along rows of two products, then slicing the middle rows. -/
def concatRows (M K N : Nat) (a b : Tensor [M, K]) (W : Tensor [K, N]) : Tensor [M, N] :=
  let c := concat [a ⬝ W, b ⬝ W] (dim := 0)
  slice c (M / 2) (M / 2 + M) (dim := 0)

/-- Three-way concat along the last axis and a product of the result. -/
def concat3 (M K N : Nat) (a b c : Tensor [M, K]) (W : Param [3 * K, N]) : Tensor [M, N] :=
  concat [a, relu b, exp c] (dim := 1) ⬝ W

def rope_big := rope 128 (B := 16) (N := 4096)
def rope_attn_odd := ropeAttention 2 37 24
def rope_attn_big := ropeAttention 16 4096 128
def concat_rows_odd := concatRows 37 100 24
def concat3_odd := concat3 37 100 24
