import Tilesmith
open Tilesmith

/-- A sigmoid-gated linear unit (GLU) then a down projection. -/
def glu (M D F : Nat) (x : Tensor [M, D]) (Wg Wu : Param [D, F]) (Wd : Param [F, D]) : Tensor [M, D] :=
  (sigmoid (x ⬝ Wg) * (x ⬝ Wu)) ⬝ Wd

/-- Leaky ReLU and a clamp written with select and comparisons. -/
def leakyClamp (M N : Nat) (x : Tensor [M, N]) (t : Tensor [M, 1]) : Tensor [M, N] :=
  let y := select (x > 0) x (0.01 * x)
  let y := select (y ≥ t) t y
  min (max y (-3.0)) 3.0

/-- A highway gate: g * h + (1 - g) * x. -/
def highway (M D : Nat) (x : Tensor [M, D]) (Wh Wg : Param [D, D]) (bg : Param [D]) : Tensor [M, D] :=
  let g := sigmoid (x ⬝ Wg + bg)
  g * relu (x ⬝ Wh) + (1 - g) * x

def glu_big := glu 4096 1024 2816
def glu_odd := glu 37 100 300
def leaky_clamp_odd := leakyClamp 37 1000
def highway_odd := highway 100 37
