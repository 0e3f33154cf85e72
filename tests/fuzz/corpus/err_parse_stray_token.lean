def f := 1
:= 2
