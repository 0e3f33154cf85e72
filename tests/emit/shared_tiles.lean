import Tilesmith
open Tilesmith

/-! Programs whose product kernels read an input tile several times: with the
tile in shared memory in the storage type, TileLang once refused T.isnan of
bfloat16 and a reduction from a shared tile (tests/emit/check_emitted.py
lowers them for sm_90a). -/

def reluScaled (M K N : Nat) (x : Tensor [M, K]) (w : Param [K, N]) : Tensor [M, N] :=
  (x * relu x) ⬝ w

def maxScaled (M K N : Nat) (x : Tensor [M, K]) (w : Param [K, N]) : Tensor [M, N] :=
  (x ⬝ w) * amax x + sum x

def softmaxOf (M N D : Nat) (s : Tensor [M, N]) (v : Tensor [N, D]) : Tensor [M, D] :=
  softmax s ⬝ v

/-- A row vector read several times where the A tile is computed: loaded
once into a rank-1 fragment before the K loop, it made TileLang 0.1.15 put a
`__syncthreads()` inside a branch that half the block takes (a kernel that
never ends: the transformer block's backward on the H200); it is now copied
to shared memory, and every lowered kernel is searched for such a barrier. -/
def rowMix (M K N : Nat) (x : Tensor [M, K]) (y : Tensor [M, K]) (r : Tensor [M, 1]) (w : Param [K, N]) :
    Tensor [M, N] :=
  (x + y * r + x * (r * r)) ⬝ w

/-- Sums and maxima over the rows of a product's result (a reduction over
axis 0): the reduced tile reads the accumulator transposed.  TileLang 0.1.15
gave it the transposed accumulator's layout and could not lower the
reduction ("ReduceOp cannot lower a layout where a source index depends on a
thread-owned reduce segment", held-out programs of session 20); it is now
written to shared memory, and its NaN check beside it. -/
def colSumMax (M K N : Nat) (a : Tensor [M, K]) (W1 W2 : Param [K, N]) : Tensor [1, N] :=
  sum (max (a ⬝ W1) (a ⬝ W2)) (dim := 0)

def colLogSoftmaxMm (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] :=
  logSoftmax (a ⬝ b) (dim := -2)

/-- The same over rows enough to stream (held out in session 22): the
running max is reduced in the loop and read beside the transposed
accumulator in the same trip, through a shared copy made in the loop. -/
def colLogsumexp (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [1, N] :=
  logsumexp (a ⬝ b) (dim := 0)

/-- A contrastive loss (held out in session 20).  Its backward pass at
B=4096, D=1024, E=256 has a kernel that accumulates a row sum over a loop
whose loads TileLang would copy (T.copy, a producer and consumers) and then
computes a product's operand from it in a second loop: on an H100 that
kernel gave other sums at every launch until such kernels loaded
element-wise (tests/emit/check_grad_modules.py checks the module's source);
its k13 had a [1, 128] fragment that hung the block until small loaded
fragments went to shared memory. -/
def infoNCE (B D E : Nat) (x y : Tensor [B, D]) (Wx Wy : Param [D, E]) : Tensor [1, 1] :=
  let a := x ⬝ Wx
  let b := y ⬝ Wy
  let a := a * rsqrt (sum (a * a) + 1e-6)
  let b := b * rsqrt (sum (b * b) + 1e-6)
  let s := (a ⬝ bᵀ) * 10.0
  let diag := cast (reshape (iota B) [B, 1] == reshape (iota B) [1, B])
  0 - mean (sum (diag * logSoftmax s)) (dim := 0)

/-- A bilinear loss with the rows of a ⬝ W normalized (held out in session
22).  Its backward pass computes the gradient g of the normalized rows in a
kernel that reads it as the left operand of g ⬝ Wᵀ and the right operand of
aᵀ ⬝ g: TileLang takes a right operand from shared memory only (a fragment
there got two layouts), and the rows' sum, reduced at the top level and
read beside an accumulator read transposed, goes through a shared copy. -/
def bilinNorm (M N D E : Nat) (a : Tensor [M, D]) (W : Param [D, E]) (b : Tensor [N, E])
    (c : Tensor [M, N]) : Tensor [1, 1] :=
  let e := a ⬝ W
  let n := e * rsqrt (sum (e * e) + 1e-8)
  sum (sum ((n ⬝ bᵀ) * c) (dim := 0))
