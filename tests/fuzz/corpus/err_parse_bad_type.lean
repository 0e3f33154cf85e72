def f (mask : Bool) (x : Tensor [4]) := x
