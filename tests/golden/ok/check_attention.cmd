check examples/attention.lean
