cd /work/main
for f in bench/exp/s20/qa/p04_axis_softmax.lean bench/exp/s20/qa/p14_deep.lean bench/exp/s20/qa/p06_lse.lean bench/exp/s20/qa/p18_misc.lean bench/exp/s20/qa/p15_cross_attention.lean bench/exp/s20/qa/p02_alibi_attention.lean bench/exp/s21/qa2/q02_moe_router.lean bench/exp/s21/qa2/q05_cosine_attention.lean bench/exp/s21/qa2/q13_iota_causal.lean bench/exp/s21/qa2/q14_attn_losses.lean bench/exp/s21/qa2/q15_attn_reduce.lean bench/exp/s21/qa2/q01_gqa_bias_temp.lean bench/exp/s21/qa2/q09_running_softmax.lean bench/exp/s21/qa2/q12_lse_pool.lean; do
  for e in $(./tilesmith check $f | grep -v '^[[:space:]]' | grep -v ':'); do
    for g in "" "--grad"; do
      r=$(timeout 300 ./tilesmith verify $f --entry $e $g 2>&1 | tail -1)
      echo "$f $e $g :: $r"
    done
  done
done
