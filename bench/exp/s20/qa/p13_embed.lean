import Tilesmith
open Tilesmith

/-- Token plus position embeddings, layer norm, then a linear head. -/
def embedHead (T V D C : Nat) (E : Param [V, D]) (P : Param [T, D]) (ids : Index [T])
    (g b : Param [D]) (W : Param [D, C]) : Tensor [T, C] :=
  layernorm (embed E ids + P) g b ⬝ W

/-- A gather along axis 0 (rows picked per column) via take_along_axis. -/
def gatherCols (M N K : Nat) (x : Tensor [M, N]) (idx : Index [K, N]) : Tensor [K, N] :=
  gather x idx (dim := 0)

/-- A one-hot matmul as an embedding, with an integer quotient mask. -/
def oneHotEmbed (T V D : Nat) (ids : Index [T]) (E : Param [V, D]) : Tensor [T, D] :=
  let oh := cast (reshape ids [T, 1] == reshape (iota V) [1, V])
  let even := cast ((reshape (iota T) [T, 1] / 2) * 2 == reshape (iota T) [T, 1])
  (oh ⬝ E) * even

/-- Bag-of-words: mean of embeddings of a [B, L] id matrix. -/
def bagOfWords (B L V D : Nat) (E : Param [V, D]) (ids : Index [B, L]) : Tensor [B, D] :=
  let e := embed E (reshape ids [B * L])
  reshape (mean (reshape e [B, L, D]) (dim := 1)) [B, D]

/-- Loss of embedHead. -/
def embedLoss (T V D C : Nat) (E : Param [V, D]) (P : Param [T, D]) (ids : Index [T])
    (g b : Param [D]) (W : Param [D, C]) (y : Index [T]) : Tensor [1, 1] :=
  crossEntropy (embedHead T V D C E P ids g b W) y

def embed_head_odd := embedHead 37 1000 24 10
def embed_head_big := embedHead 4096 32000 1024 1000
def gather_cols_odd := gatherCols 100 37 5
def one_hot_odd := oneHotEmbed 37 100 24
def bow_odd := bagOfWords 3 37 100 24
def embed_loss_odd := embedLoss 37 100 24 10
