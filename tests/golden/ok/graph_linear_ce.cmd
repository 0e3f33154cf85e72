graph examples/linear_cross_entropy.lean --entry linear_cross_entropy_8k
