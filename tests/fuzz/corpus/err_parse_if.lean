def f (x : Tensor [4]) (b : Nat) :=
  if b == 0 then x else exp x
