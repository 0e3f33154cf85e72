import Tilesmith
open Tilesmith

-- 1e8 x 1e8 bf16: 20 000 TB; the lowering broke its grid invariant and
-- said "internal error"
def mlp (T D F : Nat) (x : Tensor [T, D]) (W : Param [D, F]) : Tensor [T, F] := relu (x ⬝ W)
