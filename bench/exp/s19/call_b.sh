#!/usr/bin/env bash
# Session 19's second device input (carry .whl and bench/out_s19b, made as
# bench/exp/s19/README.md says): the attention kernels of the block and the
# LM with the transposed key tile loaded as stored (-old: gathered), and
# layer norm's lane-wise Welford (-old and s32old: per-trip Chan), timed
# side by side through the harness, then the block's kernels one by one.
set -u
out=${OUT:-/tmp/s19b}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${LIMIT:-330} python3 bench/gpu_harness.py bench/out_s19b --budget-ms 100 --launch-budget-ms 20 --no-flex \
  --prewarm-deadline 150 --json "$out/harness_b.json" > "$out/harness_b.log" 2>&1
echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness_b.log" | tail -12
timeout ${KLIMIT:-90} python3 bench/kernel_times.py bench/out_s19b transformer_block_b4_n2048:tilelang,tilelang-old,triton,triton-old \
  > "$out/kernels_b.log" 2>&1
echo "kernel_times: rc $?"; grep -v Warning "$out/kernels_b.log" | grep -E "^trans|k7_|k2_|summed" | head -20
