verify examples/gqa_decode.lean --entry gqa_decode_b1 --dtype f32 --trials 1 --seed 3
