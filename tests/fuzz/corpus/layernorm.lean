import Tilesmith
open Tilesmith

/-- Layer normalization over each row of an `M×N` matrix, gain `w`, bias `b`. -/
def rowLayernorm (M N : Nat) (x : Tensor [M, N]) (w b : Param [N]) : Tensor [M, N] :=
  layernorm x w b

/-- 16384×8192. -/
def layernorm_16k_8k := rowLayernorm 16384 8192
