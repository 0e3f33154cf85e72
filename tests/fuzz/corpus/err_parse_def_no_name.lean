def (x : Tensor [4]) := x
