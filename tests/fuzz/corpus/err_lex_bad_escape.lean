set_option pp.foo "a\qb"
