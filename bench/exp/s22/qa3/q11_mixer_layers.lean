import Tilesmith
open Tilesmith

/-- MLP-Mixer with L stacked layers: a token-mixing MLP (over positions, via
transposes) and a channel-mixing squared-ReLU MLP, each behind a layer norm
without affine parameters, with residuals. -/
def mixer (B N D F L : Nat) (x : Tensor [B, N, D]) (Wt1 : Param [L, N, F]) (Wt2 : Param [L, F, N])
    (Wc1 : Param [L, D, F]) (Wc2 : Param [L, F, D]) : Tensor [B, N, D] :=
  layers L x (fun l x =>
    let u := x - mean x
    let u := u * rsqrt (var x + 1e-5)
    let x := x + (gelu (uᵀ ⬝ Wt1[l]) ⬝ Wt2[l])ᵀ
    let w := x - mean x
    let w := w * rsqrt (var x + 1e-5)
    let a := relu (w ⬝ Wc1[l])
    x + (a * a) ⬝ Wc2[l])

/-- Mixer, mean-pooled over positions, a classifier, cross-entropy. -/
def mixerLoss (B N D F C L : Nat) (x : Tensor [B, N, D]) (Wt1 : Param [L, N, F]) (Wt2 : Param [L, F, N])
    (Wc1 : Param [L, D, F]) (Wc2 : Param [L, F, D]) (Wh : Param [D, C]) (t : Index [B]) :
    Tensor [1, 1] :=
  let y := mixer B N D F L x Wt1 Wt2 Wc1 Wc2
  crossEntropy (reshape (mean y (dim := 1)) [B, D] ⬝ Wh) t

def mixer_odd := mixer 3 37 24 45 3
def mixer_big := mixer 64 256 512 1024 4
def mixer_loss_odd := mixerLoss 3 37 24 45 10 3
def mixer_loss_big := mixerLoss 64 256 512 1024 1000 4
