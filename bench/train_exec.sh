#!/usr/bin/env bash
# The trainer's step on this machine: the float32 executor (train's default)
# against the float64 interpreter (--exec f64), same runs side by side.
# Prints one line per case: samples/s of each (the rate over the last
# logged stretch) and the ratio.
# usage: bench/train_exec.sh [./tilesmith]
set -u
bin=${1:-./tilesmith}
cd "$(dirname "$0")/.." || exit 2
rate() { "$bin" train "$@" 2>&1 | grep -E '^step' | tail -1 | sed -E 's/.* ([0-9.]+) samples\/s.*/\1/'; }
run() { # label, args...
  local label=$1
  shift
  local a b
  a=$(rate "$@" --exec f32)
  b=$(rate "$@" --exec f64)
  printf '%-46s f32 %8s  f64 %8s  samples/s  (%.2fx)\n' "$label" "$a" "$b" "$(echo "$a / $b" | bc -l)"
}
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
digits=(--data x=@digits:0-63/16 --data labels=@digits:64 --lr 3e-3 --log-every 50)
run "mlp_digits (B64 D256 L4), 150 steps" examples/mlp_classifier.lean --entry mlp_digits "${digits[@]}" --steps 150
run "mlp_digits_wide_deep (B64 D1024 L16), 30 steps" examples/mlp_classifier.lean --entry mlp_digits_wide_deep "${digits[@]}" --steps 30 --log-every 15
run "transformerLMLoss (B8 N64 D64 L2), 30 steps" examples/transformer_lm.lean --entry transformerLMLoss \
  --size B=8,N=64,V=256,D=64,H=4,F=176,L=2 --text @licenses --lr 1e-3 --steps 30 --log-every 15
