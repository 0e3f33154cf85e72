@[inline, specialize
def f := 1
