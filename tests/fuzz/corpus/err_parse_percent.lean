def f (n : Nat) := n % 2
