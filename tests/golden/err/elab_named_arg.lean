def f (x : Tensor [4, 8]) := softmax x (dimm := 0)
