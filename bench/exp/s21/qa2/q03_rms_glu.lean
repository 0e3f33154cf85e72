import Tilesmith
open Tilesmith

/-- RMSNorm written out, then a sigmoid gated linear unit, down projection and
residual. -/
def rmsGlu (M D F : Nat) (x : Tensor [M, D]) (g : Param [D]) (Wa Wb : Param [D, F])
    (Wo : Param [F, D]) : Tensor [M, D] :=
  let h := x * rsqrt (mean (x * x) + 1e-6) * g
  let u := sigmoid (h ⬝ Wa) * (h ⬝ Wb)
  x + u ⬝ Wo

def rms_glu_odd := rmsGlu 37 100 300
def rms_glu_big := rmsGlu 4096 1024 2816
