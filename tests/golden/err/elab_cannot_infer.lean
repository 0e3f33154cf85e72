def g {B C : Nat} (x : Tensor [B]) : Tensor [B] := x
def f (x : Tensor [3]) := g x
