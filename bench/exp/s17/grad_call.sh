#!/usr/bin/env bash
# Session 17's second device call (carry .whl, bench/out_grad, bench/out_bin):
# every Triton backward module of bench/out_grad (gradients against
# torch.autograd, a step timed; not GPU-run since the deferral of bd81e3e),
# then linear cross-entropy's TileLang backward before the deferral (lceold_,
# written by bd81e3e^) and after it (lce_), twice each, in this one process
# order: old, new, old, new.
set -u
out=${OUT:-/tmp/s17}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 400 python3 bench/grad_gpu.py bench/out_grad triton > "$out/grad_triton.log" 2>&1
echo "grad triton: rc $?"; grep -E '^(ok|FAIL)|passed' "$out/grad_triton.log"
for i in 1 2; do
  timeout 80 python3 bench/grad_gpu.py bench/out_grad lceold_tilelang > "$out/lceold_$i.log" 2>&1
  echo "lceold $i: rc $?"; grep -E '^(ok|FAIL)' "$out/lceold_$i.log"
  timeout 80 python3 bench/grad_gpu.py bench/out_grad lce_tilelang > "$out/lce_$i.log" 2>&1
  echo "lce $i: rc $?"; grep -E '^(ok|FAIL)' "$out/lce_$i.log"
done
