def add x y := x + y
