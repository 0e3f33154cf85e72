#!/usr/bin/env bash
# The rule checks: every rewrite rule proven with Z3 at small sizes
# (build/prove_rules, planted unsound rules refuted) and equality saturation
# end to end on every example (build/rewrite_examples).  Prints both
# programs' lines, then their "N passed, M failed" summed.
# usage: tests/rules/run.sh   (after `make build/prove_rules build/rewrite_examples`)
set -u
cd "$(dirname "$0")/../.." || exit 2
pass=0 fail=0 rc=0
for prog in build/prove_rules build/rewrite_examples; do
  out=$("$prog" 2>&1)
  r=$?
  printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed$'
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL $prog: no summary (exit $r)"
    fail=$((fail + 1))
    rc=1
    continue
  fi
  pass=$((pass + $(echo "$line" | cut -d' ' -f1)))
  fail=$((fail + $(echo "$line" | cut -d' ' -f3)))
  [ "$r" = 0 ] || rc=1
done
echo "$pass passed, $fail failed"
exit $rc
