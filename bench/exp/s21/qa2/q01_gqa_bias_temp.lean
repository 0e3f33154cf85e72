import Tilesmith
open Tilesmith

/-- Grouped-query attention: G key/value groups shared by R query heads each,
a learned additive position bias shared by all heads and a learned per-head
temperature. -/
def gqaBiasTemp (B G R N D : Nat) (q : Tensor [B, G, R, N, D]) (k v : Tensor [B, G, 1, N, D])
    (bias : Param [N, N]) (temp : Param [G, R, 1, 1]) : Tensor [B, G, R, N, D] :=
  let s := (q ⬝ kᵀ) * temp / sqrt D + bias
  softmax s ⬝ v

def gqa_bias_temp_odd := gqaBiasTemp 1 3 2 37 24
def gqa_bias_temp_big := gqaBiasTemp 2 4 4 2048 128
