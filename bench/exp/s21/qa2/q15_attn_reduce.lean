import Tilesmith
open Tilesmith

/-- Plain attention whose output is reduced over the query positions (max and
mean), then projected: the flash kernel's output goes to a float32 temporary. -/
def attnMaxPool (B N D C : Nat) (q k v : Tensor [B, N, D]) (W : Param [D, C]) : Tensor [B, C] :=
  let o := softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v
  reshape (amax o (dim := 1)) [B, D] ⬝ W

def attnMeanPool (B N D C : Nat) (q k v : Tensor [B, N, D]) (W : Param [D, C]) : Tensor [B, C] :=
  let o := softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v
  reshape (mean o (dim := 1)) [B, D] ⬝ W

def attn_max_pool_odd := attnMaxPool 3 37 24 10
def attn_max_pool_big := attnMaxPool 8 4096 128 1000
def attn_mean_pool_odd := attnMeanPool 3 37 24 10
def attn_mean_pool_big := attnMeanPool 8 4096 128 1000
