import Tilesmith
open Tilesmith

def layer (M K N : Nat) (x : Tensor [M, K]) (w : Param [K, N]) : Tensor [M, N] :=
  relu (x ⬝ w)
