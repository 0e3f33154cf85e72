#!/usr/bin/env bash
# Session 21's third device check: info_nce_big's TileLang backward module
# kernel by kernel, as emitted (k15's loads by T.copy) and with
# --schedule copy=0 (every load element-wise).
set -u
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang"
for m in bench/out_s21e/*.py; do
  echo "== $m"; timeout 200 python3 bench/exp/s21/repeat_tl.py "$m" 4 2>&1 | grep -v "^\[" | tail -25
done
