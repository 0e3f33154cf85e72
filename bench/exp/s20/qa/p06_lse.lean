import Tilesmith
open Tilesmith

/-- Row log-sum-exp of a matrix product. -/
def lseMm (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, 1] :=
  logsumexp (a ⬝ b)

/-- Log-sum-exp written by hand, over axis 0. -/
def lseCol (M N : Nat) (x : Tensor [M, N]) : Tensor [1, N] :=
  let m := amax x (dim := 0)
  m + log (sum (exp (x - m)) (dim := 0))

/-- Soft-min via negated logsumexp with a temperature. -/
def softmin (M N : Nat) (x : Tensor [M, N]) (t : Float := 0.5) : Tensor [M, 1] :=
  0 - t * logsumexp (x / (0 - t))

def lse_mm_big := lseMm 4096 1024 32000
def lse_mm_odd := lseMm 37 100 1000
def lse_col_odd := lseCol 1000 37
def softmin_odd := softmin 37 1000
