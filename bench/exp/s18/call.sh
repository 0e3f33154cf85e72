#!/usr/bin/env bash
# Session 18's second device call (carry .whl, bench/out_s18, bench/out_grad):
# a second reading of linear cross-entropy's new default (256 x 128 tiles)
# against the old one (-r128) with two other cases beside it, then the
# cross-entropy's TileLang backward before (lceold_, bd81e3e^) and after the
# deferral, and every Triton backward module (not GPU-run since bd81e3e).
#   bench/out_s18: bench/out cut to linear_cross_entropy_8k, attention_4k and
#   rmsnorm_matmul_16k (manifest and modules), the -r128 modules the old defaults
set -u
out=${OUT:-/tmp/s18}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${LIMIT:-200} python3 bench/gpu_harness.py bench/out_s18 --budget-ms 100 --launch-budget-ms 20 \
  --prewarm-deadline 60 --json "$out/harness.json" > "$out/harness.log" 2>&1
echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness.log" | tail -8
for m in lceold_tilelang lce_tilelang; do
  timeout 60 python3 bench/grad_gpu.py bench/out_grad $m > "$out/$m.log" 2>&1
  echo "$m: rc $?"; grep -E '^(ok|FAIL)' "$out/$m.log"
done
timeout ${GLIMIT:-220} python3 bench/grad_gpu.py bench/out_grad triton > "$out/grad_triton.log" 2>&1
echo "grad triton: rc $?"; grep -E '^(ok|FAIL)|passed' "$out/grad_triton.log"
