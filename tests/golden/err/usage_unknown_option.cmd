graph @FILE --entry f --fromat json
