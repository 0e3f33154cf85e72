def f (i : Index [4, 1]) := cast i
