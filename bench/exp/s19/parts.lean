import Tilesmith
open Tilesmith

/-! The two kernels of RMSNorm -> product left unfused, as programs of their
own: timed beside rmsnorm_matmul_16k (one FlashNorm kernel), their sum is
what the search's one kernel is measured against. -/

/-- RMSNorm over each row, with gain `w`. -/
def rowRmsnorm (M N : Nat) (x : Tensor [M, N]) (w : Param [N]) : Tensor [M, N] :=
  rmsnorm x w

/-- A plain product. -/
def matmulLargeK (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] :=
  a ⬝ b

/-- rmsnorm_matmul_16k's normalization: 16384×4096. -/
def rmsnorm_16k_4k := rowRmsnorm 16384 4096

/-- rmsnorm_matmul_16k's product: 16384×4096 · 4096×4096. -/
def matmul_16k_4k_4k := matmulLargeK 16384 4096 4096
