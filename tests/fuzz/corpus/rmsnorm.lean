import Tilesmith
open Tilesmith

/-- RMSNorm over each row of an `M×N` matrix, with gain `w`. -/
def rowRmsnorm (M N : Nat) (x : Tensor [M, N]) (w : Param [N]) : Tensor [M, N] :=
  rmsnorm x w

/-- 16384×8192. -/
def rmsnorm_16k_8k := rowRmsnorm 16384 8192
