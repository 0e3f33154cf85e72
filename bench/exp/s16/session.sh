# Session 16's one device call: the benchmark set through the harness (the
# deferred reductions of src/tile/defer.c in), then the hand-made variants of
# bench/exp/s16 (old against new modules of the changed cases, attention's
# statement order, Triton's warp specialization) checked and timed.
source tools/toolchain/gpu_setup.sh > /dev/null || exit 1
out=${OUT:-/tmp/s16}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
timeout 380 python3 bench/gpu_harness.py bench/out --budget-ms 100 --launch-budget-ms 20 \
  --prewarm-deadline 200 --json "$out/harness.json" > "$out/harness.log" 2>&1
echo "harness: rc $?"; grep -E "^\||Geometric|cases," "$out/harness.log" | tail -34
mods=$(ls bench/exp/s16/*.py | grep -v -e drive.py -e gen.py)
for m in $mods; do timeout 120 python3 $m --warm 1 > /dev/null 2>&1 & done; wait
timeout 90 python3 bench/exp/s16/drive.py $mods 2>&1 | grep -v WARNING | tee "$out/variants.log"
