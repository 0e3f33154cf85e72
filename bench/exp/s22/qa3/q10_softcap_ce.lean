import Tilesmith
open Tilesmith

/-- Gemma-style logit soft-capping of an LM head, then mean cross-entropy
against integer targets (a scalar loss). -/
def softcapCE (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V]) (t : Index [M]) :
    Tensor [1, 1] :=
  crossEntropy (softcap (h ⬝ W) 30) t

/-- The same with z-loss regularization (PaLM): plus 1e-4 * logsumexp^2. -/
def softcapZLoss (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V]) (t : Index [M]) :
    Tensor [1, 1] :=
  let z := softcap (h ⬝ W) 30
  let lse := logsumexp z
  let picked := gather z (reshape t [M, 1])
  mean (lse - picked + 1e-4 * lse * lse) (dim := 0)

def softcap_ce_odd := softcapCE 37 24 45
def softcap_ce_big := softcapCE 4096 1024 32000
def softcap_zloss_odd := softcapZLoss 37 24 45
def softcap_zloss_big := softcapZLoss 4096 1024 32000
