import Tilesmith
open Tilesmith

/-- 1-D max pooling with a window of 4 via a reshape. -/
def maxPool1d (B N : Nat) (x : Tensor [B, N]) : Tensor [B, N / 4] :=
  reshape (amax (reshape x [B, N / 4, 4])) [B, N / 4]

/-- 2-D max pooling 2x2 via reshape and permute. -/
def maxPool2d (C H W : Nat) (x : Tensor [C, H, W]) : Tensor [C, H / 2, W / 2] :=
  let y := reshape x [C, H / 2, 2, W / 2, 2]
  let y := permute y [0, 1, 3, 2, 4]
  let y := reshape y [C, H / 2, W / 2, 4]
  reshape (amax y) [C, H / 2, W / 2]

/-- Average pooling with a window of 5 then min pooling of the result over windows of 2. -/
def avgMin (B N : Nat) (x : Tensor [B, N]) : Tensor [B, N / 10, 1] :=
  let a := mean (reshape x [B, N / 5, 5])
  amin (reshape a [B, N / 10, 2])

/-- Pooled features into a linear layer. -/
def poolLinear (B N O : Nat) (x : Tensor [B, N]) (W : Param [N / 4, O]) : Tensor [B, O] :=
  maxPool1d B N x ⬝ W

def pool1d_big := maxPool1d 4096 4096
def pool1d_odd := maxPool1d 37 400
def pool2d_odd := maxPool2d 3 38 100
def avg_min_odd := avgMin 37 1000
def pool_linear_odd := poolLinear 37 400 37
