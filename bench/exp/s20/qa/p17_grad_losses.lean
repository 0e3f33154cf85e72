import Tilesmith
open Tilesmith

/-- A loss through slice, concat, permute, amax, abs and var. -/
def mixedLoss (M D : Nat) (x : Tensor [M, D]) (W : Param [D, D]) (g : Param [D]) : Tensor [1, 1] :=
  let h := x ⬝ W
  let a := slice h 0 (D / 2)
  let b := slice h (D / 2) D
  let c := concat [relu a, abs b] (dim := 1) * g
  let p := reshape (permute (reshape c [M, 2, D / 2]) [0, 2, 1]) [M, D]
  sum (amax p (dim := 0) + var p (dim := 0))

/-- Contrastive (InfoNCE) loss: the diagonal of a similarity matrix as the target class. -/
def infoNCE (B D E : Nat) (x y : Tensor [B, D]) (Wx Wy : Param [D, E]) : Tensor [1, 1] :=
  let a := x ⬝ Wx
  let b := y ⬝ Wy
  let a := a * rsqrt (sum (a * a) + 1e-6)
  let b := b * rsqrt (sum (b * b) + 1e-6)
  let s := (a ⬝ bᵀ) * 10.0
  let diag := cast (reshape (iota B) [B, 1] == reshape (iota B) [1, B])
  0 - mean (sum (diag * logSoftmax s)) (dim := 0)

/-- A loss through min, max and select with a learned threshold. -/
def clipLoss (M N : Nat) (x : Tensor [M, N]) (W : Param [N, N]) (t : Param [1, N]) : Tensor [1, 1] :=
  let h := x ⬝ W
  let c := min (max h (0 - t)) t
  let s := select (h > 0) c (0.1 * c)
  mean (mean (s * s) (dim := 0))

/-- An attention layer's squared output as a loss, with layers. -/
def attnStackLoss (B N D L : Nat) (x : Tensor [B, N, D]) (Wq Wk Wv : Param [L, D, D]) : Tensor [1, 1] :=
  let h := layers L x (fun l h =>
    h + softmax (causalMask ((h ⬝ Wq[l]) ⬝ (h ⬝ Wk[l])ᵀ / sqrt D)) ⬝ (h ⬝ Wv[l]))
  reshape (sum (sum (sum (h * h)) (dim := 1)) (dim := 0)) [1, 1]

def mixed_loss_odd := mixedLoss 37 24
def mixed_loss_big := mixedLoss 4096 1024
def info_nce_odd := infoNCE 37 24 16
def info_nce_big := infoNCE 4096 1024 256
def clip_loss_odd := clipLoss 37 24
def attn_stack_loss_odd := attnStackLoss 2 37 16 2
