#!/usr/bin/env bash
# Session 21's second device check: float32-storage twins of the held-out
# modules that failed against their float32 reference in bf16 (bench/out_s21c),
# and per-kernel determinism of three TileLang backward modules (bench/out_s21d).
set -u
out=${OUT:-/tmp/s21}
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang"
LIM=280 bench/exp/s21/held.sh bench/out_s21c
for m in bench/out_s21d/*.py; do
  echo "== $m"; timeout 100 python3 bench/exp/s21/repeat_tl.py "$m" 3 2>&1 | grep -v "^\[" | tail -25
done
