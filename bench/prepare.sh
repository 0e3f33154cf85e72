#!/usr/bin/env bash
# Write what the GPU harness needs into bench/out/: for every case of
# bench/cases.txt, the graph JSON and the TileLang and Triton modules, and a
# manifest.json listing them (OUT=DIR: there instead).  Runs here (no GPU needed); bench/out/ is
# carried to the GPU machine.
# usage: bench/prepare.sh [./tilesmith] [--dtype bf16]
# NAIVE=1 also writes the naive lowering's modules (tilelang-naive,
# triton-naive), timed beside the searched ones.  CANDIDATES=K also writes
# the search's first K runner-up plans (tilelang-cand1, triton-cand1, ...;
# `opt --candidate`), and each case records the cost model's predicted time
# of every variant (predicted_us) so that bench/calibration.py can rank
# predictions against measurements; every case records each variant's
# kernels and the bytes they load and store (plans), which the harness's
# --count-launches table sets beside torch.compile's.  ONE_EXP=1
# adds tilelang-1exp and triton-1exp (TS_ONE_EXP=1: a probability tile that
# a sum and a product both read is computed once, one exp per score).
# SCHEDULES="s128:stream=128 st3:stages=3" adds tilelang-s128, triton-s128,
# ... : the searched plan under `opt --schedule VALUE`, one variant per
# NAME:VALUE (names of letters and digits; "tma:copy=1" and "ew:copy=0"
# time TileLang's bulk copies against element-wise loads);
# NAME:VALUE:1exp also sets TS_ONE_EXP=1 for that variant.  EXP=1 adds
# triton-exp: Triton's exp(a - b) as tl.exp (TS_TR_EXP2=0) rather than the
# default exp2(a·log2e − b·log2e).
# STAGED=1 adds tilelang-staged: a product kernel's final 2-D store through
# shared memory and a TMA store (TS_TL_STAGE_STORE=1).
# A variant whose module is byte-identical to its target's own (a schedule
# with nothing to change in that case) is left out.
# TUNED=FILE compiles the searched variants with `opt --tuned FILE` (the
# schedules tools/tune.py measured; bench/results/*-tuned.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./tilesmith}
dtype=${DTYPE:-bf16}
out=${OUT:-bench/out}
rm -rf "$out"
mkdir -p "$out"
first=1
{
  echo '{"dtype": "'"$dtype"'", "cases": ['
  grep -v "^#" "${CASES:-bench/cases.txt}" | while read -r file inst generic; do
    [ -n "$file" ] || continue
    "$bin" graph "$file" --entry "$inst" --format json > "$out/$inst.json"
    mods=""
    preds=""
    plans=""
    variants="tilelang triton ${NAIVE:+tilelang-naive triton-naive} ${ONE_EXP:+tilelang-1exp triton-1exp} ${EXP:+triton-exp} ${STAGED:+tilelang-staged}"
    for k in $(seq 1 "${CANDIDATES:-0}"); do variants="$variants tilelang-cand$k triton-cand$k"; done
    for sch in ${SCHEDULES:-}; do variants="$variants tilelang-${sch%%:*} triton-${sch%%:*}"; done
    for variant in $variants; do
      target=${variant%%-*}
      flag="${TUNED:+--tuned $TUNED}"
      oneexp=0
      exp2=1
      staged=0
      case "$variant" in
        *-naive) flag=--naive ;;
        *-cand*) flag="--candidate ${variant##*-cand}" ;;
        *-1exp) oneexp=1 ;;
        *-exp) exp2=0 ;;
        *-staged) staged=1 ;;
        *)
          for sch in ${SCHEDULES:-}; do
            if [ "${variant#*-}" = "${sch%%:*}" ]; then
              spec=${sch#*:}
              flag="--schedule ${spec%%:*}"
              case "$spec" in *:*1exp*) oneexp=1 ;; esac
            fi
          done ;;
      esac
      if TS_ONE_EXP=$oneexp TS_TR_EXP2=$exp2 TS_TL_STAGE_STORE=$staged "$bin" opt "$file" --entry "$inst" --dtype "$dtype" --target "$target" $flag -o "$out/${inst}_$variant.py" > /dev/null 2> "$out/${inst}_$variant.err"; then
        rm -f "$out/${inst}_$variant.err"
        # (past the header's command, which names the variant's options)
        if [ "$variant" != "$target" ] && cmp -s <(tail -n +3 "$out/${inst}_$variant.py") <(tail -n +3 "$out/${inst}_$target.py"); then
          rm -f "$out/${inst}_$variant.py"  # the target's own module: nothing more to time or carry
          continue
        fi
        mods="$mods${mods:+, }\"$variant\": \"${inst}_$variant.py\""
        # the cost model's time, and the plan's kernels and the bytes they
        # load and store (the kernel/traffic table beside torch.compile's)
        read -r pred plan < <("$bin" explain "$file" --entry "$inst" --dtype "$dtype" $flag --format json |
               python3 -c 'import json,sys; d=json.load(sys.stdin); k=d["kernels"]
print(d["predicted_us"], json.dumps({"kernels": len(k), "footprint_bytes": sum(x["footprint_bytes"] for x in k),
                                     "hbm_bytes": round(sum(x["hbm_bytes"] for x in k))}))')
        preds="$preds${preds:+, }\"$variant\": $pred"
        plans="$plans${plans:+, }\"$variant\": $plan"
      elif grep -q "there is no --candidate" "$out/${inst}_$variant.err"; then
        rm -f "$out/${inst}_$variant.err"  # fewer runners-up than asked for
      else
        echo "prepare: $inst ($variant) failed: $(head -3 "$out/${inst}_$variant.err")" >&2
      fi
    done
    [ $first = 1 ] || echo ","
    first=0
    printf '  {"name": "%s", "file": "%s", "entry": "%s", "generic": "%s", "dtype": "%s", "graph": "%s.json", "modules": {%s}, "predicted_us": {%s}, "plans": {%s}}' \
      "$inst" "$file" "$inst" "$generic" "$dtype" "$inst" "$mods" "$preds" "$plans"
  done
  echo
  echo ']}'
} > "$out/manifest.json"
python3 -c "import json,sys; m=json.load(open('$out/manifest.json')); print('prepared', len(m['cases']), 'cases in $out')"
