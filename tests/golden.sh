#!/usr/bin/env bash
# Golden tests: run tilesmith and compare its output with a committed file.
#
#   tests/golden/ok/NAME.cmd       arguments to tilesmith (one line); expected
#   tests/golden/ok/NAME.expected  stdout, then "exit N"
#   tests/golden/err/NAME.lean     a bad input; run as `tilesmith check NAME.lean`
#                                  (or with the arguments in NAME.cmd, where
#                                  @FILE stands for the .lean file)
#   tests/golden/err/NAME.expected stderr, then "exit N"
#
# UPDATE=1 tests/golden.sh ./tilesmith rewrites the .expected files; review
# the diff before committing.  Prints "N passed, M failed".
set -u
bin=${1:-./tilesmith}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
pass=0 fail=0
export NO_COLOR=1

# Differences at float64's rounding level (1e-15 and below) depend on the
# CPU: OpenBLAS picks its kernels by CPU model, and the sums they form round
# differently (2.7e-16 on an AMD EPYC, 3e-16 on an Intel Xeon).  Both sides
# of the comparison write such a number as ROUNDING.
norm() { sed -E 's/[0-9]+(\.[0-9]+)?e-(1[5-9]|[2-9][0-9])/ROUNDING/g'; }

run_case() { # name kind cmdline
  local expected=$1 out
  shift
  if [ "$kind" = ok ]; then
    out=$("$bin" "$@" 2>/dev/null; echo "exit $?")
  else
    out=$("$bin" "$@" 2>&1 >/dev/null; echo "exit $?")
  fi
  if [ "${UPDATE:-0}" = 1 ]; then
    printf '%s\n' "$out" > "$expected"
    pass=$((pass + 1))
  elif [ -f "$expected" ] && [ "$(printf '%s\n' "$out" | norm)" == "$(norm < "$expected")" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $expected"
    if [ -f "$expected" ]; then
      diff <(printf '%s\n' "$out") "$expected" | head -20
    else
      echo "  (no expected file; run with UPDATE=1)"
    fi
  fi
}

for cmd in tests/golden/ok/*.cmd; do
  [ -e "$cmd" ] || continue
  kind=ok
  read -r -a args < "$cmd"
  run_case "${cmd%.cmd}.expected" "${args[@]}"
done
for src in tests/golden/err/*.lean; do
  [ -e "$src" ] || continue
  kind=err
  if [ -f "${src%.lean}.cmd" ]; then
    read -r -a args < "${src%.lean}.cmd"
    args=("${args[@]//@FILE/$src}")
  else
    args=(check "$src")
  fi
  run_case "${src%.lean}.expected" "${args[@]}"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
