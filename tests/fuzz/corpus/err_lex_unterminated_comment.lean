def f (x : Tensor [4]) := x

/- a comment that
   never ends
def g := 1
