import Tilesmith
open Tilesmith

/-- A GQA block with temperature and residual, reduced to a squared-norm loss. -/
def gqaLoss (B N E D : Nat) (x : Tensor [B, N, E]) (Wq : Param [E, 2 * D]) (Wk Wv : Param [E, D])
    (temp : Param [2, 1, 1]) : Tensor [1, 1] :=
  let q := permute (reshape (x ⬝ Wq) [B, N, 2, D]) [0, 2, 1, 3]
  let k := reshape (x ⬝ Wk) [B, 1, N, D]
  let v := reshape (x ⬝ Wv) [B, 1, N, D]
  let o := softmax (causalMask ((q ⬝ kᵀ) * temp)) ⬝ v
  let y := reshape (permute o [0, 2, 1, 3]) [B, N, 2 * D]
  reshape (mean (mean (mean (y * y)) (dim := 1)) (dim := 0)) [1, 1]

/-- Cosine attention pooled and classified, with cross-entropy, as a loss. -/
def cosClsLoss (B N D C : Nat) (x : Tensor [B, N, D]) (tau : Param [1, 1]) (W : Param [D, C])
    (t : Index [B]) : Tensor [1, 1] :=
  let xn := x * rsqrt (sum (x * x) + 1e-6)
  let o := softmax ((xn ⬝ xnᵀ) * tau) ⬝ x
  crossEntropy (reshape (amax o (dim := 1)) [B, D] ⬝ W) t

def gqa_loss_odd := gqaLoss 2 37 24 16
def gqa_loss_big := gqaLoss 4 1024 1024 128
def cos_cls_loss_odd := cosClsLoss 3 37 24 10
def cos_cls_loss_big := cosClsLoss 16 1024 512 1000
