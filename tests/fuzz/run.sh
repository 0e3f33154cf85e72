#!/usr/bin/env bash
# Run the front-end fuzzer for a bounded time on a copy of the seed corpus.
# usage: tests/fuzz/run.sh FUZZER SECONDS
# Fails (exit 1) on any crash, sanitizer report, leak or timeout.
set -eu
fuzzer=$1 seconds=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/tests/fuzz/work
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"
if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
     -dict="$root/tests/fuzz/lean.dict" -artifact_prefix="$work/artifacts/" \
     -print_final_stats=1 "$work/corpus" > "$work/log" 2>&1; then
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)" "$work/log" || true
  echo "fuzz: no crash in ${seconds}s"
  echo "1 passed, 0 failed"
else
  tail -60 "$work/log"
  echo "fuzz: FAILED; the input is in $work/artifacts/"
  echo "0 passed, 1 failed"
  exit 1
fi
