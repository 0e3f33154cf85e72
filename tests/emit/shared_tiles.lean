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
