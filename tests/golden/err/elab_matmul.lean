def f (B : Nat) (x : Tensor [B, 8]) (w : Param [7, 16]) := x ⬝ w
def g := f 4
