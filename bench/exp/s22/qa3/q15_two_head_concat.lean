import Tilesmith
open Tilesmith

/-- Two attention heads of different widths on slices of one projection,
concatenated, then projected; the second head's values gathered by a
permutation of positions. -/
def twoHeads (B N D E : Nat) (x : Tensor [B, N, D]) (W : Param [D, 3 * E]) (Wo : Param [E + E / 2, D])
    (perm : Index [B, N, 1]) : Tensor [B, N, D] :=
  let p := x ⬝ W
  let q := slice p (dim := 2) 0 E
  let k := slice p (dim := 2) E (2 * E)
  let v := slice p (dim := 2) (2 * E) (3 * E)
  let h1 := softmax ((q ⬝ kᵀ) / sqrt E) ⬝ v
  let q2 := slice q (dim := 2) 0 (E / 2)
  let k2 := slice k (dim := 2) 0 (E / 2)
  let v2 := gather (slice v (dim := 2) 0 (E / 2)) perm (dim := 1)
  let h2 := softmax (causalMask ((q2 ⬝ k2ᵀ) / sqrt (E / 2))) ⬝ v2
  concat [h1, h2] (dim := 2) ⬝ Wo

def two_heads_odd := twoHeads 2 37 45 24
def two_heads_big := twoHeads 8 2048 1024 128
