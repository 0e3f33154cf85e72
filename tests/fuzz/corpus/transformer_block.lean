import Tilesmith
open Tilesmith

/-- A pre-norm transformer block: causal multi-head attention with `H` heads
(split and merged by reshape and permute) and a SwiGLU MLP of hidden width
`F`, each behind an RMSNorm and added to the residual stream. -/
def transformerBlock (B N D H F : Nat) (x : Tensor [B, N, D])
    (g1 : Param [D]) (Wq Wk Wv Wo : Param [D, D])
    (g2 : Param [D]) (Wg Wu : Param [D, F]) (Wd : Param [F, D]) : Tensor [B, N, D] :=
  let h := rmsnorm x g1
  let q := splitHeads B N H (D / H) (h ⬝ Wq)
  let k := splitHeads B N H (D / H) (h ⬝ Wk)
  let v := splitHeads B N H (D / H) (h ⬝ Wv)
  let a := softmax (causalMask ((q ⬝ kᵀ) / sqrt (D / H))) ⬝ v
  let x := x + mergeHeads B N H (D / H) a ⬝ Wo
  x + swiglu (rmsnorm x g2) Wg Wu ⬝ Wd

/-- B4 N2048 D2048, 16 heads, hidden 5632. -/
def transformer_block_b4_n2048 := transformerBlock 4 2048 2048 16 5632
