eval @FILE --entry f --in i=tests/golden/data/f64_4x1.npy --out /dev/null
