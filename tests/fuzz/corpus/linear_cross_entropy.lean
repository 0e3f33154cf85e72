import Tilesmith
open Tilesmith

/-- The loss head of a language model: logits `h ⬝ W` over a vocabulary of
`V`, then the mean cross-entropy against integer targets.  Written plainly;
the compiler must avoid writing the `M×V` logits to memory. -/
def linearCrossEntropy (M D V : Nat) (h : Tensor [M, D]) (W : Param [D, V])
    (targets : Index [M]) : Tensor [1, 1] :=
  crossEntropy (h ⬝ W) targets

/-- Hidden 8192×4096, vocabulary 128256. -/
def linear_cross_entropy_8k := linearCrossEntropy 8192 4096 128256
