def f : Nat → Nat
  | 0 => 1
  | n => n
