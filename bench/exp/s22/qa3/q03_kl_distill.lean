import Tilesmith
open Tilesmith

/-- Knowledge distillation: KL(p_teacher || p_student) between the temperature
softmaxes of teacher logits (given) and student logits (h ⬝ W), summed over
the vocabulary, averaged over rows, scaled by T^2. -/
def klDistill (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V]) (zt : Tensor [M, V])
    (T : Float := 2.0) : Tensor [1, 1] :=
  let zs := (h ⬝ W) / T
  let lt := logSoftmax (zt / T)
  let ls := logSoftmax zs
  let kl := sum (exp lt * (lt - ls))
  mean kl (dim := 0) * (T * T)

def kl_distill_odd := klDistill 37 24 45
def kl_distill_big := klDistill 4096 1024 32000
