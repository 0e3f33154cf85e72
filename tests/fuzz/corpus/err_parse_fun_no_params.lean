def f (x : Tensor [4]) := layers 4 x (fun => x)
