opt @FILE --entry attention_4k --naive --candidate 2 --target triton -o build/golden_none.py
