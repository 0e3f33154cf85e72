#!/usr/bin/env bash
# Session 19's device call (carry .whl and bench/out made by
# bench/exp/s19/prepare.sh): the benchmark set at this commit's defaults, and
# the extra cases and variants prepare.sh adds, through the harness.
set -u
out=${OUT:-/tmp/s19}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout ${LIMIT:-560} python3 bench/gpu_harness.py bench/out ${ONLY:+--only $ONLY} --budget-ms 100 --launch-budget-ms 20 \
  --prewarm-deadline 200 --json "$out/harness.json" > "$out/harness.log" 2>&1
echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness.log" | tail -45
