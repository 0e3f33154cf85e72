#!/bin/bash
# Runs every command for the instances listed in LIST (FILE NAME per line), one at a time,
# niced, each under timeout 300.  One line per command in results/summary.tsv; logs in results/.
# Adapted from bench/exp/s21/qa2/run.sh; adds, for odd instances, the sm_90a lowering of the
# TileLang module (bench/exp/s21/lower.py) and, for odd losses, opt --grad --target
# tilelang with the lowering of its backward module and the interpreter on the f32 --grad module.
cd /work/main
Q=${Q:-bench/exp/s22/qa3}   # (bench/exp/s21/qa2/run.sh runs this over qa2)
R=$Q/results; M=/tmp/qa3; mkdir -p $R $M
TS=./tilesmith
PY=/root/.cache/tilesmith/toolchain-venv/bin/python
run() { # id cmd...
  local id=$1; shift
  local t0=$(date +%s.%N)
  timeout 300 nice -n 10 "$@" > $R/$id.log 2>&1; local rc=$?
  local t1=$(date +%s.%N)
  printf "%s\trc=%d\t%.1fs\t%s\n" "$id" $rc $(echo "$t1 - $t0" | bc) "$*" >> $R/summary.tsv
}
while read F N; do
  [ -z "$F" ] && continue
  F=$Q/$F
  run $N.check $TS check $F --entry $N
  run $N.tiles $TS tiles $F --entry $N
  run $N.verify $TS verify $F --entry $N
  run $N.explain bash -c "$TS explain $F --entry $N --json > /dev/null"
  run $N.opt_triton $TS opt $F --entry $N --target triton -o $M/${N}_triton.py
  run $N.opt_tilelang $TS opt $F --entry $N --target tilelang -o $M/${N}_tilelang.py
  loss=0
  if $TS check $F --entry $N 2>&1 | grep -q ': Tensor \[1, 1\]'; then
    loss=1
    run $N.verify_grad $TS verify $F --entry $N --grad
    run $N.opt_grad $TS opt $F --entry $N --grad --target triton -o $M/${N}_grad_triton.py
  fi
  case $N in *_odd)
    run $N.opt_f32 $TS opt $F --entry $N --target triton --dtype f32 -o $M/${N}_f32.py
    run $N.interp env TRITON_INTERPRET=1 $PY tests/emit/interpret.py $M/${N}_f32.py
    run $N.lower $PY bench/exp/s21/lower.py $M/${N}_tilelang.py
    if [ $loss = 1 ]; then
      run $N.opt_grad_f32 $TS opt $F --entry $N --grad --target triton --dtype f32 -o $M/${N}_grad_f32.py
      run $N.interp_grad env TRITON_INTERPRET=1 $PY tests/emit/interpret.py $M/${N}_grad_f32.py $M/${N}_grad_f32_backward.py
      run $N.opt_grad_tilelang $TS opt $F --entry $N --grad --target tilelang -o $M/${N}_grad_tilelang.py
      run $N.lower_grad $PY bench/exp/s21/lower.py $M/${N}_grad_tilelang_backward.py
    fi
  esac
done < $Q/$1
