def f [Inhabited Nat] (x : Tensor [4]) := x
