eval @FILE --entry f --in x=tests/golden/data/f64_2x3.npy --out /dev/null
