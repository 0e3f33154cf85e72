def f (x : Tensor [4] := x
