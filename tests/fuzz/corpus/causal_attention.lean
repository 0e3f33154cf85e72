import Tilesmith
open Tilesmith

/-- Causal scaled dot-product attention: position `i` attends to positions
`j ≤ i` only (`causalMask` sets the other scores to `-∞` before the softmax). -/
def causalAttention (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=
  let s := causalMask ((q ⬝ kᵀ) / sqrt D)
  softmax s ⬝ v

/-- The headline size: B4 H16 N4096 D128. -/
def causal_attention_4k := causalAttention 4 16 4096 128

/-- Many short sequences: B16 H16 N1024 D128. -/
def causal_attention_b16_n1024 := causalAttention 16 16 1024 128

/-- One long sequence: B1 H16 N16384 D128. -/
def causal_attention_b1_n16k := causalAttention 1 16 16384 128

/-- Head dimension 64: B8 H32 N2048 D64. -/
def causal_attention_b8_h32_n2048_d64 := causalAttention 8 32 2048 64
