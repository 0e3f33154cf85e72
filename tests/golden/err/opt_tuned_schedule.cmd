opt @FILE --entry attention_4k --schedule stream=64 --tuned tests/golden/data/tuned.tsv --target triton -o build/golden_none.py
