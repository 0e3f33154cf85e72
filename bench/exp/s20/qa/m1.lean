import Tilesmith
open Tilesmith
def lsm0 (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] := logSoftmax x (dim := 0)
def lsmMm0 (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] := logSoftmax (a ⬝ b) (dim := 0)
def smMm0 (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] := softmax (a ⬝ b) (dim := 0)
def sm0 (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] := softmax x (dim := 0)
def sum0 (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] := x - sum x (dim := 0)
def max0 (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] := x - amax x (dim := 0)
