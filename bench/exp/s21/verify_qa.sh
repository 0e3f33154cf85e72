#!/usr/bin/env bash
# verify (and verify --grad) over every concrete definition of the held-out
# program files given (default: session 20's, bench/exp/s20/qa/*.lean); one
# line a run.  Session 21 ran it on all of them (224 runs), and after the
# row-maximum bound on the files with maxima or softmax:
#   bench/exp/s20/qa/{p02_alibi_attention,p04_axis_softmax,p06_lse,p14_deep,
#   p15_cross_attention,p18_misc}.lean bench/exp/s21/qa2/{q01_gqa_bias_temp,
#   q02_moe_router,q05_cosine_attention,q09_running_softmax,q12_lse_pool,
#   q13_iota_causal,q14_attn_losses,q15_attn_reduce}.lean   (120 runs)
cd "$(dirname "$0")/../../.." || exit 2
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(bench/exp/s20/qa/*.lean)
for f in "${files[@]}"; do
  for e in $(./tilesmith check "$f" | grep -v '^[[:space:]]' | grep -v ':'); do
    for g in "" "--grad"; do
      r=$(timeout 300 ./tilesmith verify "$f" --entry "$e" $g 2>&1 | tail -1)
      echo "$f $e $g :: $r"
    done
  done
done
