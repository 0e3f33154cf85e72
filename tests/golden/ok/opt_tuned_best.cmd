opt examples/attention.lean --entry attention --size B=1,H=2,N=1024,D=64 --tuned tests/golden/data/tuned.tsv --target best -o build/golden_best.py
