import Tilesmith
open Tilesmith

/-! Models that are not in examples/, for `tilesmith hparams`: the
classification must follow transposed uses, biases, an embedding and a
readout that reads the embedding's shape, and widths written as
expressions of the width symbol. -/

/-- A GPT-style stack of MLP blocks with layer norm (gain and bias), weights
stored [out, in] and used transposed, hidden width 4 * D, a separate
unembedding U [V, D] used as Uᵀ. -/
def mlpLM (B N V D L : Nat) (ids : Index [B, N]) (E : Param [V, D])
    (Gn Bn : Param [L, D]) (Wup : Param [L, 4 * D, D]) (bup : Param [L, 4 * D])
    (Wdn : Param [L, D, 4 * D]) (U : Param [V, D]) : Tensor [B, N, V] :=
  let x := reshape (embed E (reshape ids [B * N])) [B, N, D]
  let x := layers L x (fun l x => x + relu (layernorm x Gn[l] Bn[l] ⬝ Wup[l]ᵀ + bup[l]) ⬝ Wdn[l]ᵀ)
  x ⬝ Uᵀ

def mlp_lm := mlpLM 2 8 32 64 3

/-- Residual blocks with biases: W1's product meets its bias b1 before the
gelu (it does not end the branch), W2's meets b2 and then the residual add
(it does: the branch multiplier scales its output). -/
def biasBlocks (B D F L : Nat) (x : Tensor [B, D]) (W1 : Param [L, D, F]) (b1 : Param [L, F])
    (W2 : Param [L, F, D]) (b2 : Param [L, D]) : Tensor [B, D] :=
  layers L x (fun l h => h + (gelu (h ⬝ W1[l] + b1[l]) ⬝ W2[l] + b2[l]))

def bias_blocks := biasBlocks 4 16 32 4

/-- Tied input and output embeddings: E gathered, then multiplied as Eᵀ. -/
def tiedLM (B V D : Nat) (ids : Index [B]) (E : Param [V, D]) (W : Param [D, D]) : Tensor [B, V] :=
  relu (embed E ids ⬝ W) ⬝ Eᵀ

def tied_lm := tiedLM 4 32 16

/-- A block that ends in a per-layer gain after its product (LayerScale):
the product's matrix carries the block multiplier through the gain. -/
def gainBlocks (B D L : Nat) (x : Tensor [B, D]) (W : Param [L, D, D]) (g : Param [L, D]) : Tensor [B, D] :=
  layers L x (fun l h => h + g[l] * relu (h ⬝ W[l]))

def gain_blocks := gainBlocks 4 16 4

/-- A stack with no residual add: there is no block update to scale. -/
def plainStack (B D L : Nat) (x : Tensor [B, D]) (W : Param [L, D, D]) : Tensor [B, D] :=
  layers L x (fun l h => relu (h ⬝ W[l]))

def plain_stack := plainStack 4 16 4

/-- Matrices that reach their products through an elementwise op: a fixed
scale (linear in W: W is a hidden matrix and may carry multipliers) and a
tanh (not linear: the readout's output multiplier cannot be put on Wout's
values). -/
def scaledMatrices (B I D C : Nat) (x : Tensor [B, I]) (Win : Param [I, D]) (W : Param [D, D])
    (Wout : Param [D, C]) : Tensor [B, C] :=
  let h := relu (x ⬝ Win)
  let h := relu (h ⬝ (W / sqrt D))
  h ⬝ tanh Wout

def scaled_matrices := scaledMatrices 4 6 16 3

/-- Attention with an explicit head axis: per-head weights Wq : [H, D, 8]
(the heads are the product's outputs) and Wo : [H, 8, D] (summed over the
heads after it), so H is part of Wq's fan-out and of Wo's fan-in. -/
def headAxis (B N D H : Nat) (x : Tensor [B, N, D]) (Wq Wk Wv : Param [H, D, 8]) (Wo : Param [H, 8, D]) :
    Tensor [B, N, D] :=
  let xs := reshape x [B, 1, N, D]
  let a := softmax (((xs ⬝ Wq) ⬝ (xs ⬝ Wk)ᵀ) / sqrt 8) ⬝ (xs ⬝ Wv)
  x + reshape (sum (a ⬝ Wo) (dim := 1)) [B, N, D]

def head_axis := headAxis 2 4 32 4
