import Tilesmith
open Tilesmith

/-! Products with fewer than 16 columns whose rows are also reduced and
stored (a softmax over a few classes): the columns are held whole in one
tile, which a product needs 16 wide or more (mma); tilesmith once gave it
the axis's own width (4) and Triton refused the module. -/

def classProbs (M K N : Nat) (x : Tensor [M, K]) (w : Param [K, N]) : Tensor [M, N] :=
  softmax (x ⬝ w)

def headMix (B H D : Nat) (x : Tensor [B, H * D]) (w : Param [H * D, D]) : Tensor [B, D] :=
  softmax (x ⬝ w) / sqrt D
