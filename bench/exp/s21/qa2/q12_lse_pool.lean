import Tilesmith
open Tilesmith

/-- Log-sum-exp pooling over the sequence with a temperature (a smooth max), then
a classifier head. -/
def lsePool (B N D C : Nat) (x : Tensor [B, N, D]) (W : Param [D, C]) (t : Float := 0.25) : Tensor [B, C] :=
  let p := t * logsumexp (x / t) (dim := 1)
  reshape p [B, D] ⬝ W

def lse_pool_odd := lsePool 3 37 100 10
def lse_pool_big := lsePool 32 2048 1024 1000
