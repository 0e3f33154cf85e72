import Tilesmith
open Tilesmith

/-- A transposed-left product: x^T y (contracting over rows). -/
def atb (M K N : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) : Tensor [M, N] :=
  aᵀ ⬝ b

/-- A transposed-right product then transpose of the result. -/
def abtT (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [N, K]) : Tensor [N, M] :=
  (a ⬝ bᵀ)ᵀ

/-- Heads by permute of [B, N, H, D] then attention scores per head and merge back. -/
def permuteAttn (B N H D : Nat) (q k v : Tensor [B, N, H, D]) : Tensor [B, N, H, D] :=
  let q := permute q [0, 2, 1, 3]
  let k := permute k [0, 2, 3, 1]
  let v := permute v [0, 2, 1, 3]
  permute (softmax ((q ⬝ k) / sqrt D) ⬝ v) [0, 2, 1, 3]

/-- A 3-D permute that moves the batch last, then a product. -/
def permuteMm (A B C N : Nat) (x : Tensor [A, B, C]) (W : Param [A, N]) : Tensor [B, C, N] :=
  permute x [1, 2, 0] ⬝ W

def atb_big := atb 4096 4096 4096
def atb_odd := atb 37 100 300
def abt_odd := abtT 37 100 300
def permute_attn_odd := permuteAttn 2 37 3 16
def permute_mm_odd := permuteMm 37 5 100 24
