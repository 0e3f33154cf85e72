#!/usr/bin/env bash
# Device calls of the benchmark harness on the GPU machine (run from the repo
# root, carrying .whl and bench/out), one part per call (a call may last 10
# minutes):
#   bench/gpu_session.sh harness    every case of bench/out checked at full
#        size against float32 PyTorch and timed beside eager, torch.compile,
#        the library kernels and flex_attention (CUDA-graph replays);
#   bench/gpu_session.sh launches   the kernels one call of each contender
#        launches (torch.profiler), beside the plans' kernels and bytes and
#        Inductor's own count and byte estimate (bench/out made with NAIVE=1
#        has the naive lowering's modules too).
# Here, before it: bench/prepare.sh ./tilesmith (NAIVE=1 for the launches
# table) and tools/toolchain/fetch_gpu_wheels.sh (TileLang's wheels in .whl).
# JSON and logs go to $OUT; docs/BENCHMARKS.md records what they say.
set -u
part=${1:?usage: bench/gpu_session.sh harness|launches}
out=${OUT:-/tmp/gpu_session}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
case "$part" in
  harness)
    timeout 580 python3 bench/gpu_harness.py bench/out --budget-ms 100 --launch-budget-ms 20 \
      --prewarm-deadline 200 --json "$out/h200.json" > "$out/h200.log" 2>&1
    echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/h200.log" | tail -40 ;;
  launches)
    timeout 580 python3 bench/gpu_harness.py bench/out --count-launches --no-flex \
      --prewarm-deadline 200 --json "$out/launches.json" > "$out/launches.log" 2>&1
    echo "launches: rc $?"; grep -E "^\||cases," "$out/launches.log" | tail -40 ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
