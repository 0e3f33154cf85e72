#!/usr/bin/env bash
# Front-end benchmark: time `tilesmith check` on generated files of 5,000,
# 10,000 and 20,000 lines of definitions (every definition concrete, so each
# is parsed AND elaborated), and report the best of 5 runs and the peak RSS,
# to show time and memory grow linearly.  Then time `eval` on small examples.
# usage: bench/front_bench.sh ./tilesmith
set -eu
bin=${1:-./tilesmith}
# one core, as the target says ("under 0.2 s on one core")
pin=()
command -v taskset > /dev/null && pin=(taskset -c 0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() { # lines -> file
  awk -v n="$1" 'BEGIN {
    print "import Tilesmith\nopen Tilesmith\n"
    for (i = 0; 5 * i + 3 < n; i++) {
      printf "/-- generated block %d -/\n", i
      printf "def block%d (x : Tensor [64, 256]) (w : Param [256, 256]) (g : Param [256]) : Tensor [64, 256] :=\n", i
      printf "  let h := rmsnorm x g\n"
      printf "  softmax (h ⬝ w) + x * %d.5\n", i % 7
      printf "\n"
    }
  }' > "$tmp/gen$1.lean"
}

echo "| lines | definitions | best of 5 (s) | peak RSS (MiB) |"
echo "|---|---|---|---|"
for lines in 5000 10000 20000; do
  gen $lines
  best=999
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N)
    "${pin[@]}" "$bin" check "$tmp/gen$lines.lean" --stats > /dev/null 2> "$tmp/stats"
    e=$(date +%s.%N)
    best=$(awk -v s="$s" -v e="$e" -v b="$best" 'BEGIN { t = e - s; print (t < b ? t : b) }')
  done
  rss=$(sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' "$tmp/stats")
  defs=$(grep -c '^def ' "$tmp/gen$lines.lean")
  printf "| %d | %d | %.3f | %s |\n" "$lines" "$defs" "$best" "$rss"
done

echo
echo "| example | entry and sizes | eval best of 5 (s) |"
echo "|---|---|---|"
while read -r file entry sizes; do
  best=999
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N)
    "${pin[@]}" "$bin" eval "examples/$file" --entry "$entry" --size "$sizes" --out "$tmp/o.npy" > /dev/null
    e=$(date +%s.%N)
    best=$(awk -v s="$s" -v e="$e" -v b="$best" 'BEGIN { t = e - s; print (t < b ? t : b) }')
  done
  printf "| %s | %s %s | %.4f |\n" "$file" "$entry" "$sizes" "$best"
done < bench/eval_cases.txt
