import Tilesmith
open Tilesmith

def u (N : Nat) (x : Tensor [N, N]) : Tensor [N, N] := softmax x 0 1
