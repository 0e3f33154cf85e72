import Tilesmith
open Tilesmith

/-- Finite loss; the gradient through the unselected sqrt branch is 0 * NaN = NaN
    (as in PyTorch's torch.where), but the central differences are 0. -/
def whereSqrt (w : Param [4, 3]) : Tensor [1, 1] :=
  sum (sum (select (w > 0) (sqrt w) 0) (dim := 1)) (dim := 0)

