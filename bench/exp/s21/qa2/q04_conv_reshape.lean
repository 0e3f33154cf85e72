import Tilesmith
open Tilesmith

/-- A 1-D convolution of kernel size 3 (valid padding) written as three shifted
slices concatenated along the channels, then a product. -/
def conv3 (B L C O : Nat) (x : Tensor [B, L, C]) (W : Param [3 * C, O]) (b : Param [O]) :
    Tensor [B, L - 2, O] :=
  let a0 := slice x (dim := 1) 0 (L - 2)
  let a1 := slice x (dim := 1) 1 (L - 1)
  let a2 := slice x (dim := 1) 2 L
  relu (concat [a0, a1, a2] (dim := 2) ⬝ W + b)

/-- A patch embedding: non-overlapping windows of 4 positions, as a reshape and
a product. -/
def patchEmbed (B L C O : Nat) (x : Tensor [B, L, C]) (W : Param [4 * C, O]) : Tensor [B, L / 4, O] :=
  reshape x [B, L / 4, 4 * C] ⬝ W

def conv3_odd := conv3 2 37 24 100
def conv3_big := conv3 8 1024 512 1024
def patch_embed_odd := patchEmbed 3 100 37 24
def patch_embed_big := patchEmbed 16 4096 64 1024
