def f (x : Tensor [B, N) := x
