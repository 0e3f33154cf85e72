import Tilesmith
open Tilesmith

/-- "Attention" normalized over the queries (softmax along dim -2, as in slot
attention), then renormalized over keys by a weighted mean. -/
def slotAttn (B S N D : Nat) (slots : Tensor [B, S, D]) (x : Tensor [B, N, D])
    (Wq Wk Wv : Param [D, D]) : Tensor [B, S, D] :=
  let q := slots ⬝ Wq
  let k := x ⬝ Wk
  let v := x ⬝ Wv
  let a := softmax ((q ⬝ kᵀ) / sqrt D) (dim := -2)
  let a := a / (sum a + 1e-8)
  a ⬝ v

def slot_attn_odd := slotAttn 3 7 45 24
def slot_attn_big := slotAttn 64 16 4096 256
