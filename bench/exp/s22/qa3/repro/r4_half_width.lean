import Tilesmith
open Tilesmith

/-- The first half of the columns, exp'd, concatenated back to the input. -/
def halfConcat (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N + N / 2] :=
  concat [x, exp (slice x (dim := 1) 0 (N / 2))] (dim := 1)

/-- The first half of the columns, scaled. -/
def halfSlice (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N / 2] :=
  slice x (dim := 1) 0 (N / 2) * 2

/-- Softmax of the first half of the columns, normalized over a half. -/
def halfSoftmax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N / 2] :=
  softmax (slice x (dim := 1) 0 (N / 2))

def half_concat := halfConcat 37 45
def half_slice := halfSlice 37 45
def half_softmax := halfSoftmax 37 45
