import Tilesmith
open Tilesmith

/-- Scaled dot-product attention, as written in a textbook:
`softmax (q ⬝ kᵀ / √D) ⬝ v` over `B` batches of `H` heads, `N` positions,
head dimension `D`. -/
def attention (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=
  let s := (q ⬝ kᵀ) / sqrt D
  softmax s ⬝ v

/-- The headline size: B4 H16 N4096 D128. -/
def attention_4k := attention 4 16 4096 128

/-- Many short sequences: B16 H16 N1024 D128. -/
def attention_b16_n1024 := attention 16 16 1024 128

/-- One long sequence: B1 H16 N16384 D128. -/
def attention_b1_n16k := attention 1 16 16384 128

/-- Head dimension 64: B8 H32 N2048 D64. -/
def attention_b8_h32_n2048_d64 := attention 8 32 2048 64
