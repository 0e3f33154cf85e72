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
#        has the naive lowering's modules too);
#   bench/gpu_session.sh bytes      the HBM bytes one call of each contender
#        moves, read by Nsight Compute (dram__bytes_read/write.sum, cold L2
#        per kernel; needs a machine whose runtime lets ncu read counters),
#        tabled by bench/ncu_bytes.py.
#   bench/gpu_session.sh race       each module of bench/out_race (made by
#        bench/prepare_race.sh: kernels TileLang's ThreadSync pass warns of a
#        race in, and two controls) run once under compute-sanitizer's
#        racecheck and checked against its reference (carry bench/out_race).
# Here, before it: bench/prepare.sh ./tilesmith (NAIVE=1 for the launches
# table) and tools/toolchain/fetch_gpu_wheels.sh (TileLang's wheels in .whl).
# JSON and logs go to $OUT; docs/BENCHMARKS.md records what they say.
set -u
part=${1:?usage: bench/gpu_session.sh harness|launches|bytes|race}
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
  bytes)
    command -v ncu > /dev/null || { echo "no ncu here"; exit 1; }
    timeout 570 ncu --profile-from-start off --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      -f -o "$out/bytes" python3 bench/gpu_harness.py bench/out --ncu-marks --no-flex --prewarm-deadline 200 \
      --json "$out/bytes.json" > "$out/bytes.log" 2>&1
    echo "ncu harness: rc $?"; grep -E "==PROF==|==ERROR==|cases," "$out/bytes.log" | tail -8
    ncu --import "$out/bytes.ncu-rep" --csv --page raw --print-units base > "$out/ncu.csv" 2> "$out/ncu_import.err"
    python3 bench/ncu_bytes.py "$out/ncu.csv" "$out/bytes.json" | tee "$out/bytes.md" ;;
  race)
    command -v compute-sanitizer > /dev/null || { echo "no compute-sanitizer here"; exit 1; }
    for m in bench/out_race/*.py; do
      timeout 280 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 20 \
        python3 bench/race_one.py "$m" > "$out/race_$(basename "$m" .py).log" 2>&1
      echo "$(basename "$m"): rc $? $(grep -E "RACECHECK SUMMARY|ok$|MISMATCH" "$out/race_$(basename "$m" .py).log" | tr '\n' ' ')"
    done ;;
  *) echo "unknown part $part" >&2; exit 2 ;;
esac
