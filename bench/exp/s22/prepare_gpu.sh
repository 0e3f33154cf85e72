#!/bin/bash
# Session 22's device check: the modules whose TileLang code this session's
# fixes changed (a row state copied to shared memory inside its loop; a
# product's right operand in shared memory; a top-level row sum staged
# beside a transposed accumulator read), both targets, written to
# bench/out_s22 (carried with .whl; run there by bench/exp/s21/held.sh).
set -eu
cd "$(dirname "$0")/../../.."
ts=${1:-./tilesmith}
out=bench/out_s22
rm -rf $out && mkdir -p $out
one() { # file entry sizes grad
  local f=$1 e=$2 sz=$3 g=$4 name=$2${3:+_$(echo $3 | tr ',=' '__')}
  for t in tilelang triton; do
    $ts opt $f --entry $e ${sz:+--size $sz} $g --target $t -o $out/${name}_$t.py > /dev/null
  done
}
one bench/exp/s22/qa3/repro/r1_lse_mid_mm.lean lse0_c1000 "" ""
one tests/emit/shared_tiles.lean colLogsumexp M=1000,K=24,N=45 ""
one tests/emit/shared_tiles.lean colLogsumexp M=16384,K=512,N=4096 ""
one bench/exp/s22/qa3/q08_nll_channels.lean nll_conv_odd "" ""
one bench/exp/s22/qa3/q08_nll_channels.lean nll_conv_big "" ""
one tests/emit/shared_tiles.lean bilinNorm M=37,N=37,D=24,E=17 --grad
one tests/emit/shared_tiles.lean bilinNorm M=4096,N=4096,D=1024,E=512 --grad
one bench/exp/s22/qa3/q06_clip_loss.lean clip_loss_odd "" --grad
one bench/exp/s22/qa3/q06_clip_loss.lean clip_loss_big "" --grad
ls $out | wc -l; du -sh $out
