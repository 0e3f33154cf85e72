import Tilesmith
open Tilesmith

def u (N : Nat) (x : Tensor [N, 8]) (w : Param [8]) : Tensor [N, 8] :=
  rmsnorm x w (epsilon := 1e-5)
