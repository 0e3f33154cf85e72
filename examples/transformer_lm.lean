import Tilesmith
open Tilesmith

/-- One pre-norm decoder block: causal multi-head attention with `H` heads and
a SwiGLU MLP of hidden width `F`, each behind an RMSNorm, added to the
residual stream. -/
def decoderBlock (B N D H F : Nat) (x : Tensor [B, N, D])
    (g1 : Param [D]) (Wq Wk Wv Wo : Param [D, D])
    (g2 : Param [D]) (Wg Wu : Param [D, F]) (Wd : Param [F, D]) : Tensor [B, N, D] :=
  let h := rmsnorm x g1
  let q := splitHeads B N H (D / H) (h ⬝ Wq)
  let k := splitHeads B N H (D / H) (h ⬝ Wk)
  let v := splitHeads B N H (D / H) (h ⬝ Wv)
  let a := softmax (causalMask ((q ⬝ kᵀ) / sqrt (D / H))) ⬝ v
  let x := x + mergeHeads B N H (D / H) a ⬝ Wo
  x + swiglu (rmsnorm x g2) Wg Wu ⬝ Wd

/-- A small transformer language model of width `D` and depth `L`: token
embedding (a gather), `L` decoder blocks with weights stacked along `L`, a
final RMSNorm and a readout to the vocabulary of `V`.  Returns the logits. -/
def transformerLM (B N V D H F L : Nat) (ids : Index [B, N]) (E : Param [V, D])
    (G1 : Param [L, D]) (Wq Wk Wv Wo : Param [L, D, D])
    (G2 : Param [L, D]) (Wg Wu : Param [L, D, F]) (Wd : Param [L, F, D])
    (Gf : Param [D]) (Wout : Param [D, V]) : Tensor [B, N, V] :=
  let x := reshape (embed E (reshape ids [B * N])) [B, N, D]
  let x := layers L x (fun l x =>
    decoderBlock B N D H F x G1[l] Wq[l] Wk[l] Wv[l] Wo[l] G2[l] Wg[l] Wu[l] Wd[l])
  rmsnorm x Gf ⬝ Wout

/-- The training loss of `transformerLM`: mean next-token cross-entropy
against `targets` (the ids shifted by one, prepared by the caller). -/
def transformerLMLoss (B N V D H F L : Nat) (ids targets : Index [B, N]) (E : Param [V, D])
    (G1 : Param [L, D]) (Wq Wk Wv Wo : Param [L, D, D])
    (G2 : Param [L, D]) (Wg Wu : Param [L, D, F]) (Wd : Param [L, F, D])
    (Gf : Param [D]) (Wout : Param [D, V]) : Tensor [1, 1] :=
  let logits := transformerLM B N V D H F L ids E G1 Wq Wk Wv Wo G2 Wg Wu Wd Gf Wout
  crossEntropy (reshape logits [B * N, V]) (reshape targets [B * N])

/-- Byte-level vocabulary (256), context 128, batch 16, width 256, 4 heads,
hidden 704, depth 4. -/
def lm_small := transformerLMLoss 16 128 256 256 4 704 4

/-- Width 512, 8 heads, hidden 1408, depth 8, context 256, batch 8. -/
def lm_medium := transformerLMLoss 8 256 256 512 8 1408 8

/-- The same loss with the MLP's hidden width tied to the model width
(`4 * D`) and heads of width 16 (`D / 16` of them): one width symbol scales
every hidden dimension, the form a width sweep trains
(`tilesmith sweep --width D=...`). -/
def transformerLMWidthLoss (B N V D L : Nat) (ids targets : Index [B, N]) (E : Param [V, D])
    (G1 : Param [L, D]) (Wq Wk Wv Wo : Param [L, D, D])
    (G2 : Param [L, D]) (Wg Wu : Param [L, D, 4 * D]) (Wd : Param [L, 4 * D, D])
    (Gf : Param [D]) (Wout : Param [D, V]) : Tensor [1, 1] :=
  transformerLMLoss B N V D (D / 16) (4 * D) L ids targets E G1 Wq Wk Wv Wo G2 Wg Wu Wd Gf Wout
