/- outer
  /- inner -/
  still in the outer comment
def g := 1
