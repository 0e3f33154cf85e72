#!/usr/bin/env bash
# Session 19's device calls (carry .whl and bench/out made by
# bench/exp/s19/prepare.sh):
#   call.sh harness   the benchmark set at this commit's defaults, and the extra
#                     cases and variants prepare.sh adds, through the harness
#   call.sh both      the two below in one call (the machine is released when idle)
#   call.sh kernels   each kernel of the multi-kernel cases timed on its own
#                     beside its predicted time (bench/kernel_times.py)
set -u
out=${OUT:-/tmp/s19}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
case ${1:-harness} in
  both)
    LIMIT=${HLIMIT:-470} bash "$0" harness
    LIMIT=${KLIMIT:-100} bash "$0" kernels | tail -120 ;;
  harness)
    timeout ${LIMIT:-570} python3 bench/gpu_harness.py bench/out ${ONLY:+--only $ONLY} --budget-ms 100 \
      --launch-budget-ms 20 --prewarm-deadline 200 --json "$out/harness.json" > "$out/harness.log" 2>&1
    echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness.log" | tail -45 ;;
  kernels)
    timeout ${LIMIT:-570} python3 bench/kernel_times.py bench/out lm_small mlp_digits transformer_block_b4_n2048 \
      linear_cross_entropy_8k rmsnorm_matmul_16k matmul_256_k131072 gqa_decode_b1 gqa_decode_b8 ln_linear_big \
      rmsnorm_matmul_small gated_mlp_small swiglu_mlp_8k > "$out/kernels.log" 2>&1
    echo "kernel_times: rc $?"; cat "$out/kernels.log" | grep -v Warning | head -250 ;;
esac
