set_option trace.compiler "on
def f := 1
