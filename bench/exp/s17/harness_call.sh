#!/usr/bin/env bash
# Session 17's harness call, cut to the cases whose variants decide a default
# (device time was short): carry .whl and bench/out.
set -u
out=${OUT:-/tmp/s17}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
only=${ONLY:-attention_4k,causal_attention_4k,softcap_window_attention_4k,rmsnorm_matmul_16k,swiglu_mlp_8k}
only=${ONLY:-$only,matmul_256_k131072,linear_cross_entropy_8k,transformer_block_b4_n2048}
timeout ${LIMIT:-430} python3 bench/gpu_harness.py bench/out --only "$only" --budget-ms 100 --launch-budget-ms 20 \
  --prewarm-deadline 120 --json "$out/harness.json" > "$out/harness.log" 2>&1
echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness.log" | tail -40
