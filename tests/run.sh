#!/usr/bin/env bash
# Run every suite of `make test` and finish with one summary line,
# "N passed, M failed", summing the suites' own summary lines.
# usage: tests/run.sh FUZZ_SECONDS
#        tests/run.sh --requirements   (only check what the suites need)
set -u
cd "$(dirname "$0")/.." || exit 2

# What the suites need beyond the C build: python3 with the packages of
# requirements-test.txt (the NumPy cross-check), clang with libFuzzer (the
# fuzzing run) and Z3 (the rule prover).  Checked before anything runs (and
# by `make test` before anything is built), so a missing one stops at once
# and says what to install, instead of failing minutes later with a traceback.
requirements() {
  local missing=() p mod tmp
  if ! command -v python3 > /dev/null 2>&1; then
    missing+=("python3: apt-get install python3 python3-pip (as root or with sudo)")
  else
    for p in $(sed -e 's/#.*//' -e 's/[<>=!~;[ ].*//' requirements-test.txt); do
      mod=$(echo "$p" | tr 'A-Z-' 'a-z_')
      python3 -c "import $mod" > /dev/null 2>&1 ||
        python3 -c 'import importlib.metadata, sys; importlib.metadata.version(sys.argv[1])' "$p" \
          > /dev/null 2>&1 ||
        missing+=("the Python package '$p' (requirements-test.txt): python3 -m pip install -r requirements-test.txt
      (where pip refuses a system-wide install, add --break-system-packages or use a venv)")
    done
  fi
  if ! command -v clang > /dev/null 2>&1; then
    missing+=("clang with libFuzzer: apt-get install clang libclang-rt-dev (as root or with sudo)")
  else
    tmp=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
      > "$tmp/f.c"
    clang -fsanitize=fuzzer,address,undefined -o "$tmp/f" "$tmp/f.c" > /dev/null 2>&1 ||
      missing+=("libFuzzer (clang is there, but cannot link -fsanitize=fuzzer): apt-get install libclang-rt-dev (as root or with sudo)")
    rm -rf "$tmp"
  fi
  tmp=$(mktemp -d)
  printf '#include <z3.h>\nint main(void) { Z3_config c = Z3_mk_config(); Z3_del_config(c); return 0; }\n' > "$tmp/z.c"
  cc -o "$tmp/z" "$tmp/z.c" -lz3 > /dev/null 2>&1 ||
    missing+=("Z3 (the rule prover, tests/rules/prove_rules.c): apt-get install libz3-dev (as root or with sudo)")
  rm -rf "$tmp"
  [ ${#missing[@]} = 0 ] && return 0
  echo "make test needs what is missing here:" >&2
  for p in "${missing[@]}"; do echo "  - $p" >&2; done
  echo "(.ci/run installs all of it on a fresh Debian machine.)" >&2
  return 1
}

if [ "${1:-}" = --requirements ]; then
  requirements
  exit
fi
requirements || exit 2
fuzz_seconds=${1:-60}
total_pass=0 total_fail=0 broken=() timings=()

suite() { # name command...
  local name=$1 log t0=$SECONDS
  shift
  echo "== $name: $*"
  log=$(mktemp)
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # each suite's wall time, for keeping CI under its 30 minutes
  timings+=("$((SECONDS - t0)) s $name")
  record "$name" "$log" "$rc"
}

# A long suite started in the background beside the ones that follow (the
# machine has two cores and a suite uses one), its output shown and counted
# by suite_wait.
bg_names=() bg_pids=() bg_logs=() bg_t0=()
suite_bg() { # name command...
  local name=$1 log
  shift
  log=$(mktemp)
  echo "== $name (in the background): $*"
  ("$@" > "$log" 2>&1; echo $? > "$log.rc") &
  bg_names+=("$name") bg_pids+=($!) bg_logs+=("$log") bg_t0+=($SECONDS)
}
suite_wait() {
  local i
  for i in "${!bg_pids[@]}"; do
    wait "${bg_pids[$i]}"
    echo "== ${bg_names[$i]} (ran in the background):"
    cat "${bg_logs[$i]}"
    timings+=("$((SECONDS - bg_t0[i])) s ${bg_names[$i]} (background, until collected)")
    record "${bg_names[$i]}" "${bg_logs[$i]}" "$(cat "${bg_logs[$i]}.rc" 2>/dev/null || echo 1)"
    rm -f "${bg_logs[$i]}.rc"
  done
}

record() { # name log rc: add the suite's summary line to the totals
  local name=$1 log=$2 rc=$3
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  rm -f "$log"
  if [ -n "$line" ]; then
    total_pass=$((total_pass + $(echo "$line" | cut -d' ' -f1)))
    total_fail=$((total_fail + $(echo "$line" | cut -d' ' -f3)))
  fi
  if [ "$rc" != 0 ] || [ -z "$line" ]; then
    broken+=("$name")
    [ -z "$line" ] && total_fail=$((total_fail + 1))
  fi
}

suite unit build/unit
suite structures build/structures
suite golden tests/golden.sh ./tilesmith
suite explain python3 tests/search/check_explain.py ./tilesmith
suite shape-key tests/search/check_shape_key.sh ./tilesmith
suite tune-records python3 tests/tune/check_records.py ./tilesmith
suite verify-examples tests/verify_examples.sh ./tilesmith
suite grad-examples tests/grad/check_examples.sh ./tilesmith
suite crosscheck python3 tests/crosscheck.py ./tilesmith
suite sweep tests/train/sweep_check.sh ./tilesmith
suite train-data tests/train/data_check.sh ./tilesmith
suite train-lr-mult tests/train/lr_mult_check.sh ./tilesmith
suite rules tests/rules/run.sh
suite lake tests/lake_check.sh ./tilesmith
# emitted modules: byte-compiled always; lowered for sm_90a (TileLang) and
# compiled for capability 9.0 (Triton) when the pinned toolchain is there
# (TOOLCHAIN_PYTHON, installed by tools/toolchain/install_here.sh; CI sets
# REQUIRE_TOOLCHAIN=1 so that a missing toolchain fails instead of skipping)
# with the toolchain (torch and Triton), the small float32 Triton modules
# also run in Triton's CPU interpreter against their reference (--interpret)
py=${TOOLCHAIN_PYTHON:-python3}
if [ -n "${TOOLCHAIN_PYTHON:-}" ]; then
  # opt --grad: backward modules against torch.autograd, interpreted, lowered
  # (CPU); the longest suite but emit, so the two run side by side
  suite_bg grad-modules "$py" tests/emit/check_grad_modules.py ./tilesmith
fi
suite emit "$py" tests/emit/check_emitted.py ./tilesmith --compile-all ${REQUIRE_TOOLCHAIN:+--require-toolchain} \
  ${TOOLCHAIN_PYTHON:+--interpret}
if [ -n "${TOOLCHAIN_PYTHON:-}" ]; then
  suite toolchain "$py" tools/toolchain/validate_example.py
  suite harness "$py" bench/gpu_harness.py --self-test ./tilesmith
  # run()'s argument checks and parameter names (torch on the CPU, no GPU)
  suite run-args "$py" tests/emit/check_run_args.py ./tilesmith
  # modules over free sizes: sizes from shapes, the compile cache, errors (CPU)
  suite dynamic "$py" tests/emit/check_dynamic.py ./tilesmith
  # tilesmith grad against torch.autograd in float64 (torch on the CPU)
  suite grad-torch "$py" tests/grad/torch_check.py ./tilesmith
  # tilesmith hparams --emit-pytorch from PyTorch, and a muP coordinate check (CPU)
  suite hparams-torch "$py" tests/hparams/check_pytorch.py ./tilesmith
  # tilesmith train against the same training in PyTorch (float64, CPU)
  suite train-torch "$py" tests/train/torch_check.py ./tilesmith
fi
suite unit-asan build/asan/unit
suite golden-asan tests/golden.sh build/asan/tilesmith
suite fuzz tests/fuzz/run.sh build/fuzz/fuzz_front "$fuzz_seconds"
suite_wait

echo
echo "seconds per suite, slowest first:"
printf '%s\n' "${timings[@]}" | sort -rn | sed 's/^/  /'
if [ ${#broken[@]} -gt 0 ]; then echo "failing suites: ${broken[*]}"; fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ ${#broken[@]} = 0 ]
