def f (x : Tensor [4, 8]) : Tensor [4, 8] := sum x
