import Tilesmith
open Tilesmith

/-- Size-1 everything. -/
def tiny (x : Tensor [1, 1]) (W : Param [1, 1]) : Tensor [1, 1] :=
  softmax (x ⬝ W) + logsumexp x + var x + mean x (dim := 0)

/-- Single-row softmax with huge N and an odd row count. -/
def wideSoftmax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  softmax (x * 2.0 - 1.0)

/-- Uses size, iota arithmetic and a power by a tensor. -/
def posScale (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  let p := cast (reshape (iota N) [1, N]) / size x
  x * (p + 1) ^ (abs x) + cast (reshape (iota M) [M, 1] * 2 + 1)

/-- log of softmax by hand, with exp and log composed (cancellation candidates). -/
def logExp (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  log (exp x) + exp (log (abs x + 1)) - sqrt (x * x)

/-- Nested reductions: max over rows of sums over columns. -/
def nestedRed (A B C : Nat) (x : Tensor [A, B, C]) : Tensor [A, 1, 1] :=
  amax (sum x (dim := 2)) (dim := 1)

/-- A softmax of a transposed product. -/
def softmaxT (N M D : Nat) (q : Tensor [N, D]) (k : Tensor [M, D]) : Tensor [M, N] :=
  softmax ((q ⬝ kᵀ)ᵀ)

def tiny_inst := tiny
def wide_softmax_odd := wideSoftmax 3 100000
def pos_scale_odd := posScale 37 100
def log_exp_odd := logExp 37 100
def nested_red_odd := nestedRed 3 37 100
def nested_red_big := nestedRed 64 4096 1024
def softmax_t_odd := softmaxT 37 100 24
def softmax_t_big := softmaxT 4096 4096 128
