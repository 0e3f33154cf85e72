import Tilesmith
open Tilesmith

/-- A running (prefix) softmax over the middle axis of [B, N, D]: each position
normalized by the exponentials up to it, the prefix sum written as a product
with a lower-triangular matrix built from iota comparisons. -/
def runningSoftmax (B N D : Nat) (x : Tensor [B, N, D]) : Tensor [B, N, D] :=
  let e := exp (x - amax x (dim := 1))
  let tri := cast (reshape (iota N) [N, 1] ≥ reshape (iota N) [1, N])
  e / (tri ⬝ e)

/-- Softmax over axis 2 of a 4-D tensor, used as attention-pooling weights over
that axis. -/
def midAxisPool (A B C D : Nat) (x : Tensor [A, B, C, D]) (w : Param [1, 1, 1, D]) : Tensor [A, B, 1, D] :=
  let a := softmax (x * w) (dim := 2)
  sum (a * x) (dim := 2)

def running_softmax_odd := runningSoftmax 3 37 100
def running_softmax_big := runningSoftmax 8 2048 1024
def mid_axis_pool_odd := midAxisPool 3 5 37 24
def mid_axis_pool_big := midAxisPool 16 64 256 128
