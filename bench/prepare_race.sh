#!/usr/bin/env bash
# Write the TileLang modules whose lowering TileLang's ThreadSync pass warns
# about ("Hoisting sync out of an if whose condition is not safe ... the race
# remains": a map TileLang spreads over a quarter of the threads, in the
# kernels that stream scores loaded from memory or read a row factor staged
# in shared memory; attention's backward recomputes its softmax so), with two controls that lower without the warning, into
# bench/out_race/ (OUT=DIR: there), for `bench/gpu_session.sh race` on the GPU
# machine: each module run once under compute-sanitizer's racecheck and
# checked against its reference.
# usage: bench/prepare_race.sh [./tilesmith]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./tilesmith}
out=${OUT:-bench/out_race}
rm -rf "$out"
mkdir -p "$out"
while read -r file entry sizes name; do
  case "$file" in ''|'#'*) continue ;; esac
  case "$name" in
    *_backward_*) # the backward module of `opt --grad` (the forward one is dropped)
      "$bin" opt "$file" --entry "$entry" --size "$sizes" --target tilelang --grad -o "$out/fwd_$name.py" > /dev/null
      mv "$out/fwd_${name}_backward.py" "$out/$name.py" && rm "$out/fwd_$name.py" ;;
    *) "$bin" opt "$file" --entry "$entry" --size "$sizes" --target tilelang -o "$out/$name.py" > /dev/null ;;
  esac
done <<'CASES'
# file                              generic            sizes                       name
examples/attention.lean             attention          B=1,H=2,N=512,D=64          attention_backward_warned
tests/emit/shared_tiles.lean        softmaxOf          M=256,N=4096,D=128          softmax_of_warned
tests/emit/small_products.lean      qkNormAttention    B=1,H=2,N=300,D=32          qk_norm_warned
examples/attention.lean             attention          B=1,H=2,N=512,D=64          attention_control
examples/softmax.lean               rowSoftmax         M=64,N=4096                 softmax_control
CASES
echo "prepared $(ls "$out" | wc -l) modules in $out"
