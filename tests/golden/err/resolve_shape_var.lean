import Tilesmith
open Tilesmith

def u {s : Shape} (x : Tensor t) : Tensor s := x
