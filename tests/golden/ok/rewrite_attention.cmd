graph examples/attention.lean --entry attention_4k --rewrite
