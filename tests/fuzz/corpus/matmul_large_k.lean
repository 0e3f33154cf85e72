import Tilesmith
open Tilesmith

/-- A plain matrix product `a ⬝ b`; the interesting sizes have a long
contraction `K` and a small output (split-K territory). -/
def matmulLargeK (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] :=
  a ⬝ b

/-- 256×131072 · 131072×256. -/
def matmul_256_k131072 := matmulLargeK 256 131072 256

/-- 16×4096 · 4096×16. -/
def matmul_16_k4096 := matmulLargeK 16 4096 16

/-- 16×32768 · 32768×16. -/
def matmul_16_k32768 := matmulLargeK 16 32768 16

/-- 64×4096 · 4096×64. -/
def matmul_64_k4096 := matmulLargeK 64 4096 64

/-- 64×32768 · 32768×64. -/
def matmul_64_k32768 := matmulLargeK 64 32768 64
