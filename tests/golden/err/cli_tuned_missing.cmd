opt @FILE --entry mm --tuned /nonexistent/tuned.tsv --target best -o build/golden_none.py
