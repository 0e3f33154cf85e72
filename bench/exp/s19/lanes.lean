import Tilesmith
open Tilesmith

/-! Layer norm rows at sizes whose plan keeps the mean and the squares lane
by lane (lane-wise Welford): one block a row, and a row split across blocks. -/

def lnRows (M N : Nat) (x : Tensor [M, N]) (g b : Tensor [N]) : Tensor [M, N] :=
  let mu := sum x / N
  let d := x - mu
  let var := sum (d * d) / N
  d * rsqrt (var + 1e-5) * g + b

def ln_rows_4_32k := lnRows 4 32768
def ln_rows_1_64k := lnRows 1 65536
def ln_rows_256_32k := lnRows 256 32768
