import Tilesmith
open Tilesmith
def capMask (M D E : Nat) (x : Tensor [M, D]) (W : Tensor [D, E]) : Tensor [M, E] :=
  let y := 30 * tanh (x ⬝ W / 30)
  select (y == amax y) (softmax y) 0
def capMask1 (M D E : Nat) (x : Tensor [M, D]) (W : Tensor [D, E]) : Tensor [M, E] :=
  let y := 30 * tanh (x ⬝ W / 30)
  select (y == amax y) 1 0
def scMask (M D E : Nat) (x : Tensor [M, D]) (W : Tensor [D, E]) : Tensor [M, E] :=
  let y := (x ⬝ W) / 30
  select (y == amax y) (softmax y) 0
