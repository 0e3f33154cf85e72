import Tilesmith
open Tilesmith

def u (N : Nat) (x : Tensor [N]) : Tensor [N] := double x

def double (N : Nat) (x : Tensor [N]) : Tensor [N] := x + x
