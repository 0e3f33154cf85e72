import Tilesmith
open Tilesmith

/-- A product of three matrices with a transpose in the middle. -/
def threeMmT (M K N P : Nat) (a : Tensor [M, K]) (b : Tensor [N, K]) (c : Tensor [N, P]) : Tensor [M, P] :=
  a ⬝ bᵀ ⬝ c

/-- The transpose of a product in the middle of a chain, then a scale. -/
def midT (M K N P : Nat) (a : Tensor [K, M]) (b : Tensor [K, N]) (c : Tensor [M, P]) (s : Tensor [N, 1]) :
    Tensor [N, P] :=
  ((aᵀ ⬝ b)ᵀ ⬝ c) * s

def three_mm_t_odd := threeMmT 37 100 300 24
def three_mm_t_big := threeMmT 4096 1024 4096 1024
def mid_t_odd := midT 37 100 300 5
def mid_t_big := midT 2048 4096 2048 1024
