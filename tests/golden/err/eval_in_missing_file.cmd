eval @FILE --entry f --in x=tests/golden/data/nonexistent.npy --out /dev/null
