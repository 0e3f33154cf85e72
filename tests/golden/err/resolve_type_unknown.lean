import Tilesmith
open Tilesmith

def u (Heads : Nat) (x : Tensor [Head, 4]) : Tensor [Heads, 4] := x
