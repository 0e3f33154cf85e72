check examples/transformer_lm.lean
