#!/usr/bin/env bash
# The search's shape key (search.c): kernels alike in all that pricing
# reads share one price.  With TS_CHECK_SHAPE_KEY=1 the search prices
# every kernel anyway and reports a kernel whose price differs from the
# one its shape key holds.  Every definition of the test programs, forward
# and --grad, must report none; and with TS_PLANT_SHAPE_KEY=1 (a key that
# leaves shapes out) the check must report the planted bug.
# One line per program, then "N passed, M failed".
# usage: tests/search/check_shape_key.sh ./tilesmith
set -u
bin=${1:-./tilesmith}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
export NO_COLOR=1
files="examples/*.lean tests/search/programs.lean tests/emit/small_products.lean tests/emit/shared_tiles.lean tests/prims.lean"
list=$(mktemp)
for f in $files; do
  for e in $("$bin" check "$f" | grep -v '^[[:space:]]' | grep -v ':'); do echo "$f $e"; done
done > "$list"
check_one() { # bin file entry: the mismatches of both directions
  TS_CHECK_SHAPE_KEY=1 "$1" tiles "$2" --entry "$3" 2>&1 > /dev/null | grep 'shape key' | head -2
  TS_CHECK_SHAPE_KEY=1 "$1" tiles "$2" --entry "$3" --grad 2>&1 > /dev/null | grep 'shape key' | head -2
}
export -f check_one
out=$(xargs -P2 -L1 bash -c 'm=$(check_one '"$bin"' $0 $1); if [ -n "$m" ]; then echo "FAIL $0 $1"; echo "$m" | sed "s/^/    /"; else echo "ok   $0 $1"; fi' < "$list")
rm -f "$list"
echo "$out"
pass=$(grep -c '^ok ' <<< "$out")
fail=$(grep -c '^FAIL ' <<< "$out")
planted=$(TS_PLANT_SHAPE_KEY=1 bash -c 'check_one "$0" examples/transformer_lm.lean lm_medium' "$bin")
if [ -n "$planted" ]; then
  pass=$((pass + 1))
  echo "ok   planted: a shape key without shapes is reported ($(wc -l <<< "$planted") lines)"
else
  fail=$((fail + 1))
  echo "FAIL planted: a shape key without shapes went unreported"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
