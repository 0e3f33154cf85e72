def f (n : Nat) :=
  match n with
  | 0 => 1
  | _ => 2
