def g (x : Tensor [4, 8]) := x * 2
def f (x : Tensor [4, 9]) := g x
