/-- A single product: the search prices few alternatives. -/
def mm (a : Tensor [64, 64]) (b : Tensor [64, 64]) : Tensor [64, 64] := a ⬝ b
