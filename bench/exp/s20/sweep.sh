#!/usr/bin/env bash
# Session 20's third device call: every program of examples/,
# tests/search/programs.lean and tests/emit/small_products.lean that is not in
# the benchmark set (30), both targets, run at full size on the GPU twice and
# checked against its module's reference() (bench/exp/s20/sweep.py).  Inputs:
# bench/out_held, made by
#   while read f e; do for t in triton tilelang; do
#     ./tilesmith opt $f --entry $e --target $t -o bench/out_held/${e}_$t.py; done; done < LIST
# (LIST: file and entry of each such program).
set -u
out=${OUT:-/tmp/s20}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout ${TLIM:-240} python3 bench/exp/s20/sweep.py 'bench/out_held/*_triton.py' 6 180 | tee "$out/sweep_triton.jsonl"
timeout ${LLIM:-300} python3 bench/exp/s20/sweep.py 'bench/out_held/*_tilelang.py' 6 240 | tee "$out/sweep_tilelang.jsonl"
