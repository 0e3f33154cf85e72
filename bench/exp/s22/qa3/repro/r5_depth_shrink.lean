import Tilesmith
open Tilesmith

/-- A residual stack of depth L. -/
def stack (M D L : Nat) (x : Tensor [M, D]) (W : Param [L, D, D]) : Tensor [M, D] :=
  layers L x (fun l h => h + tanh (h ⬝ W[l]))

/-- The same weight applied R times. -/
def repeatW (M D R : Nat) (x : Tensor [M, D]) (W : Param [D, D]) : Tensor [M, D] :=
  layers R x (fun r h => h + tanh (h ⬝ W))

def stack_l2 := stack 37 45 2
def stack_l5 := stack 37 45 5
def repeat_r2 := repeatW 37 45 2
def repeat_r5 := repeatW 37 45 5
def stack_l3 := stack 37 45 3
def stack_l4 := stack 37 45 4
def stack_l2_big := stack 4096 1024 2
