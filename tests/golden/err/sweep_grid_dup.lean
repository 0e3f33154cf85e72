import Tilesmith
open Tilesmith

/-- A residual MLP classifier of width `D` and depth `L`: an input layer, `L`
pre-norm residual blocks `h + relu (rmsnorm h G[l] ⬝ W[l])` with weights
stacked along `L`, and a readout to `C` classes.  Returns the logits. -/
def residualMlp (B I D L C : Nat) (x : Tensor [B, I]) (Win : Param [I, D])
    (G : Param [L, D]) (W : Param [L, D, D]) (Wout : Param [D, C]) : Tensor [B, C] :=
  let h := relu (x ⬝ Win)
  let h := layers L h (fun l h => h + relu (rmsnorm h G[l] ⬝ W[l]))
  h ⬝ Wout

/-- The training loss of `residualMlp`: mean cross-entropy against the labels. -/
def residualMlpLoss (B I D L C : Nat) (x : Tensor [B, I]) (labels : Index [B])
    (Win : Param [I, D]) (G : Param [L, D]) (W : Param [L, D, D]) (Wout : Param [D, C]) :
    Tensor [1, 1] :=
  crossEntropy (residualMlp B I D L C x Win G W Wout) labels

/-- The handwritten digits (8×8 = 64 features, 10 classes): width 256, depth 4. -/
def mlp_digits := residualMlpLoss 64 64 256 4 10

/-- The same, wider and deeper: width 1024, depth 16. -/
def mlp_digits_wide_deep := residualMlpLoss 64 64 1024 16 10
