import Tilesmith
open Tilesmith

/-- Softmax down the columns (axis 0). -/
def colSoftmax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  softmax x (dim := 0)

/-- Softmax over the middle axis of a 3-D tensor. -/
def midSoftmax (B C L : Nat) (x : Tensor [B, C, L]) : Tensor [B, C, L] :=
  softmax x (dim := 1)

/-- Column sums and column max: a normalization by column. -/
def colNorm (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  (x - amax x (dim := 0)) / (sum (abs x) (dim := 0) + 1)

/-- A column-wise log-softmax of a product. -/
def colLogSoftmaxMm (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] :=
  logSoftmax (a ⬝ b) (dim := -2)

def col_softmax_big := colSoftmax 4096 1024
def col_softmax_odd := colSoftmax 1000 37
def mid_softmax_odd := midSoftmax 3 100 37
def col_norm_odd := colNorm 37 100
def col_lsm_odd := colLogSoftmaxMm 100 37 300
