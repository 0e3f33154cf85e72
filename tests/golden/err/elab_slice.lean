def f (x : Tensor [4, 8]) := slice x 2 9
