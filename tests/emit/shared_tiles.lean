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
