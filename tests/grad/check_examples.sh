#!/usr/bin/env bash
# `tilesmith grad --check` on the example models' losses at small sizes,
# three seeds each: every Param's gradient against central differences in
# float64 (bound 1e-6).  One line per run, then "N passed, M failed".
# usage: tests/grad/check_examples.sh ./tilesmith
set -u
bin=${1:-./tilesmith}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
export NO_COLOR=1
cases=(
  "examples/mlp_classifier.lean residualMlpLoss B=8,I=6,D=16,L=3,C=5"
  "examples/transformer_lm.lean transformerLMLoss B=2,N=8,V=16,D=8,H=2,F=16,L=2"
  "examples/linear_cross_entropy.lean linearCrossEntropy M=4,D=8,V=10"
)
pass=0 fail=0
for c in "${cases[@]}"; do
  read -r file entry sizes <<< "$c"
  for seed in 0 1 2; do
    log=$(mktemp)
    if "$bin" grad "$file" --entry "$entry" --size "$sizes" --check --seed "$seed" > "$log" 2>&1 &&
       ! grep -qv '^ok ' "$log"; then
      pass=$((pass + 1))
      echo "ok   $file $entry seed $seed: $(wc -l < "$log") Params"
    else
      fail=$((fail + 1))
      echo "FAIL $file $entry seed $seed"
      sed 's/^/    /' "$log" | head -20
    fi
    rm -f "$log"
  done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
