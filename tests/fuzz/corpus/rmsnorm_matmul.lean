import Tilesmith
open Tilesmith

/-- RMSNorm with gain `g` followed by a projection `W`: `rmsnorm x g ⬝ W`. -/
def rmsnormMatmul (M K N : Nat) (x : Tensor [M, K]) (g : Param [K]) (W : Param [K, N]) :
    Tensor [M, N] :=
  rmsnorm x g ⬝ W

/-- 16384×4096 · 4096×4096. -/
def rmsnorm_matmul_16k := rmsnormMatmul 16384 4096 4096

/-- Small batch: 16×4096 · 4096×6144. -/
def rmsnorm_matmul_small := rmsnormMatmul 16 4096 6144
