#!/bin/bash
# Runs every command for the instances listed in instances.txt (FILE NAME), one at a time.
cd /work/main
R=bench/exp/s21/qa2/results; mkdir -p $R /tmp/qa2
TS=./tilesmith
run() { # id cmd...
  local id=$1; shift
  local t0=$(date +%s.%N)
  timeout 300 nice -n 10 "$@" > $R/$id.log 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  printf "%s\trc=%d\t%.1fs\t%s\n" "$id" $rc $(echo "$t1 - $t0" | bc) "$*" >> $R/summary.tsv
}
while read F N; do
  [ -z "$F" ] && continue
  F=bench/exp/s21/qa2/$F
  run $N.check $TS check $F --entry $N
  run $N.tiles $TS tiles $F --entry $N
  run $N.verify $TS verify $F --entry $N
  run $N.explain bash -c "$TS explain $F --entry $N --json > /dev/null"
  run $N.opt_triton $TS opt $F --entry $N --target triton -o /tmp/qa2/${N}_triton.py
  run $N.opt_tilelang $TS opt $F --entry $N --target tilelang -o /tmp/qa2/${N}_tilelang.py
  if $TS check $F --entry $N 2>&1 | grep -q ': Tensor \[1, 1\]'; then
    run $N.verify_grad $TS verify $F --entry $N --grad
    run $N.opt_grad $TS opt $F --entry $N --grad --target triton -o /tmp/qa2/${N}_grad_triton.py
  fi
  case $N in *_odd)
    run $N.opt_f32 $TS opt $F --entry $N --target triton --dtype f32 -o /tmp/qa2/${N}_f32.py
    run $N.interp env TRITON_INTERPRET=1 /root/.cache/tilesmith/toolchain-venv/bin/python tests/emit/interpret.py /tmp/qa2/${N}_f32.py
  esac
done < bench/exp/s21/qa2/$1
