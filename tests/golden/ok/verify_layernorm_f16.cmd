verify examples/layernorm.lean --entry layernorm_16k_8k --dtype f16 --trials 1
