eval @FILE --entry f --in y=tests/golden/data/f64_2x3.npy --out /dev/null
