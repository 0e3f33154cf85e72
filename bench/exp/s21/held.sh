#!/usr/bin/env bash
# Session 21's held-out device check: every module of DIR (the forward and
# backward modules of the programs whose emitted code this session changed,
# bench/exp/s21/heldout.txt) run at full size twice and compared with its
# reference() (bench/exp/s20/sweep.py); one JSON line a module in $OUT.
set -u
dir=${1:?usage: held.sh DIR}
out=${OUT:-/tmp/s21}
mkdir -p "$out"
source tools/toolchain/gpu_setup.sh > /dev/null || echo "no TileLang: its modules will fail"
nvidia-smi --query-gpu=name --format=csv,noheader
timeout ${LIM:-540} python3 bench/exp/s20/sweep.py "$dir/*.py" 8 300 > "$out/held_$(basename "$dir").jsonl" 2>&1
echo "sweep rc $?"
python3 - "$out/held_$(basename "$dir").jsonl" <<'PY'
import json, sys
n, bad = 0, []
for l in open(sys.argv[1]):
    if l.startswith("{"):
        d = json.loads(l); n += 1
        if not (d.get("ok") and d.get("deterministic")): bad.append(d)
print(n, "modules,", len(bad), "not ok")
for d in bad: print(json.dumps(d)[:400])
PY
