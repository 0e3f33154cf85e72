import Tilesmith
open Tilesmith

/-! Losses for the PyTorch autograd cross-check of `tilesmith grad`
(tests/grad/torch_check.py): each a weighted sum of primitives' results over
Params, so that every rule of src/grad contributes to some gradient. -/

/-- Elementwise ops, with broadcasting of a row and a column Param. -/
def elementwise (M N : Nat) (x : Tensor [M, N]) (p : Param [M, N]) (r : Param [N]) (c : Param [M, 1]) :
    Tensor [1, 1] :=
  let a := tanh (p * r + c) + sigmoid (p - c) * exp (r / 4)
  let b := erf (p / (abs r + 1)) + sqrt (abs c + 1) + rsqrt (p * p + 1) + log (abs p + 1)
  let m := max (p * x) (relu (x - r)) + min p c
  sum (sum (a * b * x + m)) (dim := 0)

/-- Reductions, a select, layout and a gather. -/
def shapes (M N : Nat) (x : Tensor [M, N]) (i : Index [M, 2]) (p : Param [M, N]) (q : Param [N, M]) :
    Tensor [1, 1] :=
  let s := softmax (p * x)
  let t := transpose q + p
  let g := gather (t * x) i
  let w := select (x > 0) p (amax t)
  sum (sum (s * x) + sum (g * g) + amin w) (dim := 0)

/-- Kinks met by an infinite gradient (checked at a = [0, 1, 4, -0.0]):
abs' (0) = sign 0 = 0 times ∞ is NaN in PyTorch, and here. -/
def absKink (a : Param [4]) : Tensor [1, 1] :=
  reshape (sum (sqrt (abs a)) + sum (log (abs a))) [1, 1]
