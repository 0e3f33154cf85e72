opt @FILE --entry mm --target best -o build/golden_none.py
