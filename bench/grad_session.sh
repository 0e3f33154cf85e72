#!/usr/bin/env bash
# Device calls that check what `opt --grad` emits at training sizes, on the
# GPU machine (run from the repo root, carrying .whl, bench/out_bin and
# bench/out_grad), one part per call (a call may last 10 minutes):
#   bench/grad_session.sh train     examples/pytorch/train_lm.py: the
#        transformer LM through the emitted ops for 100 steps, whole-step
#        CUDA graph, then torch.compile alone;
#   bench/grad_session.sh triton    bench/grad_gpu.py over every Triton
#   bench/grad_session.sh tilelang  (or TileLang) backward module of
#        bench/out_grad: gradients against torch.autograd, a step timed.
# Logs and curves go to $OUT.  Here, before it:
#   make && cc -O2 -fopenmp -o /tmp/tilesmith-static build/rel/src/cli/*.o \
#     $(ls build/rel/src/*/*.o | grep -v src/cli) build/rel/prelude.o build/rel/dynamic_py.o build/rel/source_id.o \
#     -static -lopenblas -lz -lgfortran -lquadmath -lm -lpthread
#   strip /tmp/tilesmith-static && mkdir -p bench/out_bin && xz -c /tmp/tilesmith-static > bench/out_bin/tilesmith.xz
#   bench/prepare_grad.sh ./tilesmith
set -u
part=${1:?usage: bench/grad_session.sh train|triton|tilelang}
out=${OUT:-/tmp/grad_session}
mkdir -p "$out" /tmp/bin
xz -dc bench/out_bin/tilesmith.xz > /tmp/bin/tilesmith && chmod +x /tmp/bin/tilesmith
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ "$part" = train ]; then
 for mode in graphs compile; do
  timeout 280 python3 examples/pytorch/train_lm.py --tilesmith /tmp/bin/tilesmith --steps 100 --check \
    --mode "$mode" --csv "$out/lm_curve_$mode.csv" --out /tmp/pt > "$out/train_$mode.log" 2>&1
  echo "train_lm --mode $mode: rc $?"; tail -4 "$out/train_$mode.log"
 done
else
  timeout 560 python3 bench/grad_gpu.py bench/out_grad "$part" > "$out/grad_$part.log" 2>&1
  echo "grad_gpu $part: rc $?"; grep -E '^(ok|FAIL)|passed' "$out/grad_$part.log"
fi
