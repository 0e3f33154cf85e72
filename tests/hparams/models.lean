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
