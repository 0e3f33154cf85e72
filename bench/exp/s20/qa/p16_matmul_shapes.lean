import Tilesmith
open Tilesmith

/-- A chain of three products. -/
def chain3 (M K N P : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) (c : Tensor [N, P]) : Tensor [M, P] :=
  a ⬝ b ⬝ c

/-- Right-associated chain. -/
def chain3r (M K N P : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) (c : Tensor [N, P]) : Tensor [M, P] :=
  a ⬝ (b ⬝ c)

/-- Matrix-vector and an outer product through matmul with K = 1. -/
def matvecOuter (M K : Nat) (A : Tensor [M, K]) (x : Tensor [K, 1]) (y : Tensor [1, M]) : Tensor [M, M] :=
  (A ⬝ x) ⬝ y

/-- Batched 4-D product with broadcasting batch dims. -/
def bcastBatch (B H M K N : Nat) (a : Tensor [B, 1, M, K]) (b : Tensor [1, H, K, N]) : Tensor [B, H, M, N] :=
  a ⬝ b

/-- Column sums of a product and the max of two products. -/
def colSumMax (M K N : Nat) (a : Tensor [M, K]) (W1 W2 : Param [K, N]) : Tensor [1, N] :=
  sum (max (a ⬝ W1) (a ⬝ W2)) (dim := 0)

/-- A product whose left operand is normalized by column norms. -/
def colNormMm (M K N : Nat) (a : Tensor [M, K]) (W : Param [K, N]) : Tensor [M, N] :=
  (a * rsqrt (sum (a * a) (dim := 0) + 1e-6)) ⬝ W

/-- Row of one: M = 1 product with a residual. -/
def rowVec (K N : Nat) (x : Tensor [1, K]) (W : Param [K, N]) (y : Tensor [1, N]) : Tensor [1, N] :=
  relu (x ⬝ W) + y

def chain3_odd := chain3 37 100 3 300
def chain3r_odd := chain3r 37 100 300 5
def chain3_big := chain3 4096 4096 4096 4096
def matvec_outer_odd := matvecOuter 100 37
def bcast_batch_odd := bcastBatch 2 3 37 24 100
def col_sum_max_odd := colSumMax 100 37 300
def col_sum_max_big := colSumMax 8192 4096 4096
def col_norm_mm_odd := colNormMm 100 37 24
def row_vec_odd := rowVec 1000 37
