#!/usr/bin/env bash
# The Lake package (lakefile.toml, lean-toolchain) against the files it
# builds, without a Lean toolchain (none can be installed here): every
# root of every lean_lib exists; every example is a root (so no example
# escapes `lake build`); each file that imports Tilesmith also opens it
# (its notations and arithmetic instances are scoped); tilesmith's own
# front end parses and elaborates each file (`tilesmith check`); the
# toolchain names a Lean 4 release and the README names the same one.
# One line per check, then "N passed, M failed".
# usage: tests/lake_check.sh ./tilesmith
set -u
bin=${1:-./tilesmith}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
cd "$root" || exit 2
pass=0 fail=0
report() { # ok message [detail]
  if [ "$1" = 1 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2${3:+: $3}"; fi
}
# each lean_lib as "srcDir root root ...", from lakefile.toml
libs=$(awk '
  /^\[\[lean_lib\]\]/ { if (n) print dir, roots; n = 1; dir = "."; roots = "" }
  /^name *=/ && n { gsub(/[" ]/, "", $0); sub(/^name=/, ""); name = $0; if (roots == "") roots = name }
  /^srcDir *=/ { gsub(/[" ]/, "", $0); sub(/^srcDir=/, ""); dir = $0 }
  /^roots *=/ { r = $0; sub(/^roots *= *\[/, "", r); sub(/\].*/, "", r); gsub(/[",]/, " ", r); roots = r }
  END { if (n) print dir, roots }' lakefile.toml)
files=()
while read -r dir rest; do
  for r in $rest; do files+=("$dir/$r.lean"); done
done <<< "$libs"
report $([ ${#files[@]} -gt 2 ] && echo 1 || echo 0) "lakefile.toml builds ${#files[@]} files"
for f in "${files[@]}"; do
  if [ ! -f "$f" ]; then
    report 0 "$f: a root of lakefile.toml" "no such file"
    continue
  fi
  if grep -q '^import Tilesmith' "$f"; then
    report $(grep -q '^open Tilesmith' "$f" && echo 1 || echo 0) "$f opens Tilesmith (its notations are scoped)"
  fi
  out=$("$bin" check "$f" 2>&1)
  report $([ $? = 0 ] && echo 1 || echo 0) "$f: tilesmith check accepts it" "$(echo "$out" | tail -3)"
done
for e in examples/*.lean; do
  listed=0
  for f in "${files[@]}"; do [ "$f" = "$e" ] && listed=1; done
  report $listed "$e is a root of the Examples library"
done
tc=$(cat lean-toolchain 2>/dev/null)
report $(echo "$tc" | grep -qE '^leanprover/lean4:v4\.[0-9]+\.[0-9]+$' && echo 1 || echo 0) "lean-toolchain names a Lean 4 release ($tc)"
report $(grep -qF "${tc#*:}" README.md && echo 1 || echo 0) "the README names the release (${tc#*:})"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
