opt @FILE --entry mm --tuned tests/golden/data/tuned.tsv --target best -o build/golden_none.py
