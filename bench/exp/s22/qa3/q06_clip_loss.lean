import Tilesmith
open Tilesmith

/-- Cosine-similarity matrix of two row-normalized embeddings (after a
projection each), with a learned temperature. -/
def cosSim (M N D E : Nat) (a : Tensor [M, D]) (b : Tensor [N, D]) (Wa Wb : Param [D, E])
    (t : Param [1, 1]) : Tensor [M, N] :=
  let ea := a ⬝ Wa
  let eb := b ⬝ Wb
  let na := ea * rsqrt (sum (ea * ea) + 1e-8)
  let nb := eb * rsqrt (sum (eb * eb) + 1e-8)
  (na ⬝ nbᵀ) * exp t

/-- The symmetric CLIP loss: cross-entropy of the similarity matrix against
the diagonal, over rows (image to text) and over columns (text to image), the
diagonal picked with an iota mask. -/
def clipLoss (M D E : Nat) (a b : Tensor [M, D]) (Wa Wb : Param [D, E]) (t : Param [1, 1]) :
    Tensor [1, 1] :=
  let s := cosSim M M D E a b Wa Wb t
  let eye := cast (reshape (iota M) [M, 1] == reshape (iota M) [1, M])
  let diag := sum (s * eye)
  let rowLoss := mean (logsumexp s - diag) (dim := 0)
  let colLoss := mean (logsumexp s (dim := 0) - reshape diag [1, M])
  (rowLoss + colLoss) * 0.5

def cos_sim_odd := cosSim 37 45 24 17
def cos_sim_big := cosSim 4096 4096 1024 512
def clip_loss_odd := clipLoss 37 24 17
def clip_loss_big := clipLoss 4096 1024 512
