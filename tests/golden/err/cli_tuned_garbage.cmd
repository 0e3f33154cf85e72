opt @FILE --entry mm --tuned tests/golden/data/not_tuned.tsv --target best -o build/golden_none.py
