#!/usr/bin/env bash
# The trainer's step against sgemm alone and against PyTorch on the CPU
# (issue 10's trainer-speed number): the width-1024 residual MLP of
# examples/mlp_classifier.lean (residualMlpLoss, depth 4, AdamW) at three
# batch sizes.  For each: `tilesmith train --profile` (the step's time, and
# the same products replayed alone in sgemm: the step's share of sgemm's
# rate) and bench/train_peer.py (the same model and optimizer in PyTorch,
# float32, the same threads), one after the other on this machine.
# usage: bench/train_speed.sh [./tilesmith] [PYTHON with torch]
set -u
bin=${1:-./tilesmith}
py=${2:-python3}
cd "$(dirname "$0")/.." || exit 2
threads=$(nproc)
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $threads cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '%-22s %10s %14s %12s %12s %10s\n' case "ours ms" "sgemm alone" "our share" "torch ms" "torch/ours"
for B in 64 256 1024; do
  prof=$("$bin" train examples/mlp_classifier.lean --entry residualMlpLoss --size B=$B,I=64,D=1024,L=4,C=10 \
    --data x=@digits:0-63/16 --data labels=@digits:64 --lr 3e-3 --steps 40 --log-every 40 --profile 2>&1)
  ours=$(echo "$prof" | sed -nE 's/^profile over .*: ([0-9.]+) ms a step/\1/p')
  alone=$(echo "$prof" | sed -nE 's/.*alone in sgemm: ([0-9.]+) ms a step.*/\1/p')
  share=$(echo "$prof" | sed -nE 's/.* at ([0-9]+%) of that rate/\1/p')
  torch=$("$py" bench/train_peer.py "$B" 64 1024 4 10 40 "$threads" | sed -nE 's/.*: ([0-9.]+) ms\/step.*/\1/p')
  printf '%-22s %10s %14s %12s %12s %9.2fx\n' "B$B D1024 L4" "$ours" "$alone" "$share" "$torch" "$(echo "$torch / $ours" | bc -l)"
done
