#!/usr/bin/env bash
# Session 21's fourth device check: info_nce_big's TileLang modules after the
# rule that a kernel mixing a T.copy loop with a thread-filled one loads
# element-wise: kernel by kernel (repeat_tl.py), and both modules twice
# against their references (sweep.py).
set -u
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang"
timeout 200 python3 bench/exp/s21/repeat_tl.py bench/out_s21e/info_nce_big_tilelang_backward.py 4 2>&1 | grep -v "^\[" | tail -25
timeout 200 python3 bench/exp/s20/sweep.py 'bench/out_s21e/*.py' 2 180
