import Tilesmith
open Tilesmith
def argmaxMask (M D E : Nat) (x : Tensor [M, D]) (W : Tensor [D, E]) : Tensor [M, E] :=
  let y := x ⬝ W
  select (y == amax y) (softmax y) 0
def argmaxMask2 (M D E : Nat) (x : Tensor [M, D]) (W : Tensor [D, E]) : Tensor [M, E] :=
  let y := tanh (x ⬝ W / 30)
  select (y == amax y) 1 0
