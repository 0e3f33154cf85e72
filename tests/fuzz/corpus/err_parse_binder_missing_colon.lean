def f (x y) := x
