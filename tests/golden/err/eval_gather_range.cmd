eval @FILE --entry f --in i=tests/golden/data/idx_4x1_bad.npy --out /dev/null
