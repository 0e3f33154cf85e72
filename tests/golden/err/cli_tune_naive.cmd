tune @FILE --entry mm --naive -o build/golden_none
