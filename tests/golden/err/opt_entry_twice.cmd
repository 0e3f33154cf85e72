opt @FILE --entry attention_4k --entry other --target triton -o build/golden_none.py
