def f (x : Tensor [4, 8]) := softmax x (dim := 2)
