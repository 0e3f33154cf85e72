import Tilesmith
open Tilesmith

/-- Two row log-sum-exps of wide rows. -/
def twoLse (M V : Nat) (x y : Tensor [M, V]) : Tensor [M, 1] :=
  logsumexp x + logsumexp y

/-- One row log-sum-exp of wide rows. -/
def oneLse (M V : Nat) (x : Tensor [M, V]) : Tensor [M, 1] :=
  logsumexp x

def two_lse_big := twoLse 4096 32000
def one_lse_big := oneLse 4096 32000

/-- Row KL divergence between two softmaxes of given logits. -/
def klRows (M V : Nat) (zs zt : Tensor [M, V]) : Tensor [M, 1] :=
  let lt := logSoftmax zt
  let ls := logSoftmax zs
  sum (exp lt * (lt - ls))

def kl_rows_big := klRows 4096 32000
