import Tilesmith
open Tilesmith
def f (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] :=
  layers 3 x (fun l h => h ⬝ h)
def f1 := f 4 5
