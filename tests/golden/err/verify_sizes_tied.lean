import Tilesmith
open Tilesmith

/-- D is H * Dh, but as a parameter of its own: verify's shrunken sizes do
not fit together, and only the instance with every size 1 elaborates. -/
def mergedHeads (N H Dh D : Nat) (x : Tensor [N, H, Dh]) (W : Param [D, D]) : Tensor [N, D] :=
  reshape x [N, D] ⬝ W
