import Tilesmith
open Tilesmith

namespace Blocks

/-- A norm with a local function and pipes. -/
def pipeNorm (M N : Nat) (x : Tensor [M, N]) (g : Param [N]) : Tensor [M, N] :=
  let scale y := y * rsqrt (mean (square y) + 1e-6)
  x |> scale |> (fun y => y * g) |> fun y => silu y

end Blocks

section
/-- Heads given as a list of weights, indexed by a Nat. -/
def listHeads (M D : Nat) (x : Tensor [M, D]) (W1 W2 W3 : Param [D, D]) : Tensor [M, D] :=
  let ws := [W1, W2, W3]
  let a := x ⬝ ws[0]
  let b := x ⬝ ws[2]
  softmax a * b + (relu <| x ⬝ ws[1])
end

/-- Implicit shape binder with a named override and a curried layers function. -/
def scaleAll {s : Shape} (x : Tensor s) (c : Float := 2.0) : Tensor s := x * c

def curried (B D L : Nat) (x : Tensor [B, D]) (W : Param [L, D, D]) (b : Param [L, D]) : Tensor [B, D] :=
  layers L x fun l => fun h => scaleAll (c := 0.5) (tanh (h ⬝ W[l] + b[l])) + h

/-- An int-valued index path: token ids shifted and gathered twice. -/
def doubleGather (T V D : Nat) (E : Param [V, D]) (ids : Index [T]) (pos : Index [T, 1]) : Tensor [T, 1] :=
  let e := embed E ids
  gather e pos + gather (e * 2) pos

def pipe_norm_odd := Blocks.pipeNorm 37 100
def list_heads_odd := listHeads 37 24
def curried_odd := curried 37 24 5
def double_gather_odd := doubleGather 37 100 24
