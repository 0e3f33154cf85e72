import Tilesmith
open Tilesmith

/-- Causal ALiBi attention whose per-head slopes are computed from iota
(slope_h = 2^(-8 (h+1) / H), written as exp of a multiple of ln 2), and whose
distance bias -slope * (i - j) is built from iota arithmetic. -/
def alibiIota (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=
  let h := reshape (cast (iota H)) [H, 1, 1]
  let slope := exp ((h + 1) * (0 - 8 * 0.6931471805599453 / H))
  let i := reshape (cast (iota N)) [N, 1]
  let j := reshape (cast (iota N)) [1, N]
  let s := (q ⬝ kᵀ) / sqrt D - slope * (i - j)
  softmax (causalMask s) ⬝ v

def alibi_iota_odd := alibiIota 2 3 37 24
def alibi_iota_big := alibiIota 2 16 4096 128
