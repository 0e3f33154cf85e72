import Tilesmith
open Tilesmith

/-- logsumexp over the middle axis of a broadcast product W ⬝ x. -/
def lseMid (B C K L : Nat) (x : Tensor [B, K, L]) (W : Tensor [C, K]) : Tensor [B, 1, L] :=
  logsumexp (W ⬝ x) (dim := 1)

/-- The same, summed to a scalar per batch. -/
def lseMidSum (B C K L : Nat) (x : Tensor [B, K, L]) (W : Tensor [C, K]) : Tensor [B, 1, 1] :=
  sum (logsumexp (W ⬝ x) (dim := 1))

/-- 2-D: logsumexp over axis 0 of W ⬝ x, summed. -/
def lse0Sum (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [1, 1] :=
  sum (logsumexp (W ⬝ x) (dim := 0))

/-- 2-D: sum over axis 0 then over axis 1 of W ⬝ x. -/
def sum0Sum (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [1, 1] :=
  sum (sum (W ⬝ x) (dim := 0))

/-- 2-D: amax over axis 0 then sum. -/
def max0Sum (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [1, 1] :=
  sum (amax (W ⬝ x) (dim := 0))

def lse_mid := lseMid 3 37 24 45
def lse_mid_sum := lseMidSum 3 37 24 45
def lse0_sum := lse0Sum 37 24 45
def sum0_sum := sum0Sum 37 24 45
def max0_sum := max0Sum 37 24 45

/-- 2-D: logsumexp over axis 0 of W ⬝ x alone. -/
def lse0 (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [1, L] :=
  logsumexp (W ⬝ x) (dim := 0)

/-- 2-D: softmax over axis 0 of W ⬝ x. -/
def sm0 (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [C, L] :=
  softmax (W ⬝ x) (dim := 0)

/-- 2-D: sum of exp over axis 0 (no running max). -/
def sumExp0 (C K L : Nat) (x : Tensor [K, L]) (W : Tensor [C, K]) : Tensor [1, L] :=
  sum (exp (W ⬝ x)) (dim := 0)

def lse0_c1000 := lse0 1000 24 45
def sm0_c1000 := sm0 1000 24 45
def sum_exp0_c1000 := sumExp0 1000 24 45
