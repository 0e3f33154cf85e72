import Tilesmith

-- café latin-1, not UTF-8
def f (x : Tensor [4]) := x
