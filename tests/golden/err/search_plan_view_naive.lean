import Tilesmith
open Tilesmith

/-! A held-out program (session 20) whose backward pass the search planned
into a kernel its lowering could not realize: a kernel that stores its
root through a reshape (a view) and falls back to the naive rules stored
the root itself, which has no global ("store to a buffer that is not
global"); the pipeline then fell back to the naive lowering with a warning
(session 20).  Since session 21 the naive kernel stores the reshape, the
search prices it so, and no warning comes. -/

/-- Average over windows of 5, then the minimum over pairs of windows. -/
def avgMin (B N : Nat) (x : Tensor [B, N]) : Tensor [B, N / 10, 1] :=
  let a := mean (reshape x [B, N / 5, 5])
  amin (reshape a [B, N / 10, 2])

def avg_min_odd := avgMin 37 1000
