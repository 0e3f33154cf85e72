#!/usr/bin/env bash
# Session 20's device calls (carry .whl, bench/out from bench/prepare.sh and
# bench/out_s20 from bench/exp/s20/prepare.sh):
#   call.sh set    the benchmark set through the harness (its element-wise
#                  check and nondeterminism check new this session)
#   call.sh ln     lnl.lean's six cases through the harness, each kernel of the
#                  layer norm -> linear variants timed on its own, and
#                  repeat.py over the modules whose kernels pair a product with
#                  element-wise work on its left operand in one pipelined loop
set -u
out=${OUT:-/tmp/s20}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
case ${1:-set} in
  set)
    timeout ${LIMIT:-540} python3 bench/gpu_harness.py bench/out --budget-ms 100 --launch-budget-ms 20 \
      --prewarm-deadline 200 --json "$out/harness.json" > "$out/harness.log" 2>&1
    echo "harness: rc $?"; grep -E "^\||Geometric|cases,|FAIL|differ" "$out/harness.log" | tail -50 ;;
  ln)
    timeout ${HLIMIT:-300} python3 bench/gpu_harness.py bench/out_s20 --budget-ms 100 --launch-budget-ms 20 \
      --prewarm-deadline 200 --json "$out/harness_ln.json" > "$out/harness_ln.log" 2>&1
    echo "harness: rc $?"; grep -E "^\||Geometric|cases,|FAIL|differ" "$out/harness_ln.log" | tail -30
    v=tilelang,triton,tilelang-u,triton-u,tilelang-u1k,triton-u1k
    timeout ${KLIMIT:-120} python3 bench/kernel_times.py bench/out_s20 ln_linear_big:$v ln_linear_mid:$v \
      ln_linear_tall:tilelang,triton,tilelang-u,triton-u > "$out/kernels.log" 2>&1
    echo "kernel_times: rc $?"
    for m in bench/out/rmsnorm_matmul_16k_triton.py bench/out/rmsnorm_matmul_small_triton.py \
             bench/out_s20/ln_linear_mid_triton-u1k.py bench/out_s20/ln_linear_big_triton-u1k.py; do
      echo "== $m"; timeout 100 python3 bench/exp/s20/repeat.py "$m" 3 2>&1 | grep -v Warn | tail -14
    done ;;
esac
