#!/bin/bash
# The search's time on every example definition (forward; --grad for the
# losses) and on the LM at 16 and 32 layers: one markdown row each, from
# `explain --json` (search seconds, kernels priced, stop reason, rewrite
# seconds).  Run one at a time on an otherwise idle machine.
# usage: bench/exp/s22/search_times.sh [TILESMITH]
ts=${1:-./tilesmith}
row() { # file entry [extra args...]
  local f=$1 e=$2; shift 2
  $ts explain "$f" --entry "$e" "$@" --json 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin); s = d['search']
print(f\"| {sys.argv[1]}{' --grad' if d.get('backward') else ''} | {len(d['kernels'])} | {s['seconds']:.2f} | {s['kernels_priced']} | {s['stop_reason']} | {s['iterations']} / {s['enodes']} |\")" "$e$([ $# -gt 0 ] && [ "$1" = --size ] && echo " [$2]")"
}
echo "| entry | kernels | search s | kernels priced | stop | e-graph iterations / e-nodes |"
echo "|---|---|---|---|---|---|"
for f in examples/*.lean; do
  for e in $($ts check $f | grep -v '^[[:space:]]' | grep -v ':'); do
    row $f $e
    $ts check $f --entry $e 2>&1 | grep -q ': Tensor \[1, 1\]' && row $f $e --grad
  done
done
for L in 16 32; do
  row examples/transformer_lm.lean transformerLMLoss --size B=8,N=256,V=256,D=512,H=8,F=1408,L=$L
  row examples/transformer_lm.lean transformerLMLoss --size B=8,N=256,V=256,D=512,H=8,F=1408,L=$L --grad
done
