import Tilesmith
open Tilesmith

/-- Mean pooling over the sequence, a linear classifier, and cross-entropy written
out (log-sum-exp minus the target logit picked by a one-hot built from iota). -/
def poolClassify (B N D C : Nat) (x : Tensor [B, N, D]) (W : Param [D, C]) (b : Param [C])
    (t : Tensor [B, 1]) : Tensor [1, 1] :=
  let p := reshape (mean x (dim := 1)) [B, D]
  let z := p ⬝ W + b
  let m := amax z
  let lse := m + log (sum (exp (z - m)))
  let onehot := cast (reshape (cast (iota C)) [1, C] == t)
  mean (lse - sum (onehot * z)) (dim := 0)

def pool_classify_odd := poolClassify 3 37 100 10
def pool_classify_big := poolClassify 64 1024 1024 1000
