#!/usr/bin/env bash
# Run `tilesmith verify` on every concrete instance of every example (the
# ones `tilesmith check FILE` elaborates) and print one line per instance,
# then "N passed, M failed" (instances).  VERIFY_TRIALS (default 1) is the
# number of random-normal trials per shrunken instance; the adversarial
# input kinds always run once each.  VERIFY_DTYPE (default bf16) is the
# storage type.
# usage: tests/verify_examples.sh ./tilesmith [examples/*.lean ...]
set -u
bin=${1:-./tilesmith}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export NO_COLOR=1
trials=${VERIFY_TRIALS:-1}
dtype=${VERIFY_DTYPE:-bf16}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(examples/*.lean)
pass=0 fail=0
for f in "${files[@]}"; do
  entries=$("$bin" check "$f" 2>/dev/null | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' || true)
  for e in $entries; do
    log=$(mktemp)
    if "$bin" verify "$f" --entry "$e" --trials "$trials" --dtype "$dtype" > "$log" 2>&1; then
      pass=$((pass + 1))
      echo "ok   $f $e: $(tail -1 "$log")"
    else
      fail=$((fail + 1))
      echo "FAIL $f $e"
      grep -v '^ok ' "$log" | head -20 | sed 's/^/    /'
    fi
    rm -f "$log"
  done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
