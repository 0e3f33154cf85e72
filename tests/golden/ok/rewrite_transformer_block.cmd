graph examples/transformer_block.lean --entry transformer_block_b4_n2048 --rewrite
