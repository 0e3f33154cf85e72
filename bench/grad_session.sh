#!/usr/bin/env bash
# One device call that checks what `opt --grad` emits at training sizes, on
# the GPU machine (run from the repo root, carrying .whl, bench/out_bin and
# bench/out_grad; see the closing notes of issue 11):
#   1. examples/pytorch/train_lm.py: the transformer LM through the emitted
#      ops for 100 steps, whole-step CUDA graph, then torch.compile alone;
#   2. bench/grad_gpu.py: every backward module of bench/out_grad, Triton
#      then TileLang (gradients against torch.autograd, a step timed).
# Logs and curves go to $OUT.  Here, before it:
#   make && cc -O2 -o /tmp/tilesmith-static build/rel/src/cli/*.o \
#     $(ls build/rel/src/*/*.o | grep -v src/cli) build/rel/prelude.o build/rel/dynamic_py.o \
#     -static -lopenblas -lz -lgfortran -lquadmath -lm -lpthread
#   strip /tmp/tilesmith-static && mkdir -p bench/out_bin && xz -c /tmp/tilesmith-static > bench/out_bin/tilesmith.xz
#   bench/prepare_grad.sh ./tilesmith
set -u
out=${OUT:-/tmp/grad_session}
mkdir -p "$out" /tmp/bin
xz -dc bench/out_bin/tilesmith.xz > /tmp/bin/tilesmith && chmod +x /tmp/bin/tilesmith
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for mode in graphs compile; do
  timeout 300 python3 examples/pytorch/train_lm.py --tilesmith /tmp/bin/tilesmith --steps 100 --check \
    --mode "$mode" --csv "$out/lm_curve_$mode.csv" --out /tmp/pt > "$out/train_$mode.log" 2>&1
  echo "train_lm --mode $mode: rc $?"; tail -4 "$out/train_$mode.log"
done
for target in triton tilelang; do
  timeout 600 python3 bench/grad_gpu.py bench/out_grad "$target" > "$out/grad_$target.log" 2>&1
  echo "grad_gpu $target: rc $?"; grep -E '^(ok|FAIL)|passed' "$out/grad_$target.log"
done
