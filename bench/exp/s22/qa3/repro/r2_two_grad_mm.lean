import Tilesmith
open Tilesmith

/-- A bilinear loss: the gradient of a ⬝ W is c ⬝ b, a product; the
backward pass needs (c ⬝ b) ⬝ Wᵀ and aᵀ ⬝ (c ⬝ b). -/
def bilin (M N D E : Nat) (a : Tensor [M, D]) (W : Param [D, E]) (b : Tensor [N, E])
    (c : Tensor [M, N]) : Tensor [1, 1] :=
  sum (sum (((a ⬝ W) ⬝ bᵀ) * c) (dim := 0))

/-- The same with the rows of a ⬝ W normalized. -/
def bilinNorm (M N D E : Nat) (a : Tensor [M, D]) (W : Param [D, E]) (b : Tensor [N, E])
    (c : Tensor [M, N]) : Tensor [1, 1] :=
  let e := a ⬝ W
  let n := e * rsqrt (sum (e * e) + 1e-8)
  sum (sum ((n ⬝ bᵀ) * c) (dim := 0))

def bilin_odd := bilin 37 37 24 17
def bilin_norm_odd := bilinNorm 37 37 24 17
