verify examples/attention.lean --entry attention
