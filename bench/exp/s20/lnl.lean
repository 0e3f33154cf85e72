import Tilesmith
open Tilesmith

/-! Session 20: layer norm -> linear at three shapes, and the product alone
(the floor the fused forms are compared against). -/

/-- Layer norm then a linear layer. -/
def lnLinear (M K N : Nat) (x : Tensor [M, K]) (w b : Param [K]) (W : Param [K, N]) : Tensor [M, N] :=
  layernorm x w b ⬝ W

/-- The product alone. -/
def product (M K N : Nat) (x : Tensor [M, K]) (W : Param [K, N]) : Tensor [M, N] :=
  x ⬝ W

def ln_linear_big := lnLinear 8192 4096 4096
def ln_linear_mid := lnLinear 16384 2048 2048
def ln_linear_tall := lnLinear 32768 1024 1024
def product_big := product 8192 4096 4096
def product_mid := product 16384 2048 2048
def product_tall := product 32768 1024 1024
