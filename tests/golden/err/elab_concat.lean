def f (x : Tensor [4, 8]) (y : Tensor [3, 7]) := concat [x, y] (dim := 0)
