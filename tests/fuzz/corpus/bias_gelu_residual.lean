import Tilesmith
open Tilesmith

/-- A bias, the exact GELU, and a residual connection: `r + gelu (x + b)`. -/
def biasGeluResidual (M N : Nat) (x : Tensor [M, N]) (b : Param [N]) (r : Tensor [M, N]) :
    Tensor [M, N] :=
  r + gelu (x + b)

/-- 16384×8192. -/
def bias_gelu_residual_16k_8k := biasGeluResidual 16384 8192
