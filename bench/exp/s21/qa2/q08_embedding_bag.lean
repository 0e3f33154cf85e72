import Tilesmith
open Tilesmith

/-- An embedding bag: per-sample token ids gathered from a table, weighted,
summed over the bag and L2-normalized, then projected. -/
def embBag (B L V D O : Nat) (E : Param [V, D]) (ids : Index [B * L]) (w : Tensor [B, L, 1])
    (P : Param [D, O]) : Tensor [B, O] :=
  let e := reshape (gather E (reshape ids [B * L, 1]) (dim := 0)) [B, L, D]
  let s := reshape (sum (e * w) (dim := 1)) [B, D]
  let n := s * rsqrt (sum (s * s) + 1e-12)
  n ⬝ P

def emb_bag_odd := embBag 3 37 100 24 10
def emb_bag_big := embBag 256 64 32000 1024 1024
