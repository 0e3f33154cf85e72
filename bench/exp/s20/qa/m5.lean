import Tilesmith
open Tilesmith
def attnLoss1 (B N D : Nat) (x : Tensor [B, N, D]) (Wq Wk Wv : Param [D, D]) : Tensor [1, 1] :=
  let h := x + softmax (causalMask ((x ⬝ Wq) ⬝ (x ⬝ Wk)ᵀ / sqrt D)) ⬝ (x ⬝ Wv)
  reshape (sum (sum (sum (h * h)) (dim := 1)) (dim := 0)) [1, 1]
def attnLoss2 (B N D L : Nat) (x : Tensor [B, N, D]) (Wq Wk Wv : Param [L, D, D]) : Tensor [1, 1] :=
  let h := layers L x (fun l h =>
    h + softmax (causalMask ((h ⬝ Wq[l]) ⬝ (h ⬝ Wk[l])ᵀ / sqrt D)) ⬝ (h ⬝ Wv[l]))
  reshape (sum (sum (sum (h * h)) (dim := 1)) (dim := 0)) [1, 1]
