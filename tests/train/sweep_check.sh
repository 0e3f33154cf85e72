#!/usr/bin/env bash
# tilesmith sweep: a small grid trains and resumes from its CSV, and the
# optimum is the vertex of the parabola in log2(lr) (checked on a CSV of
# known losses, which the sweep reads back instead of training).
# usage: tests/train/sweep_check.sh ./tilesmith   Prints "N passed, M failed".
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi; }
python3 - "$tmp" <<'PY'
import sys, struct
# x [64, 8] float64 and labels [64] int64 as .npy, from a fixed linear congruential sequence
def npy(path, shape, dtype, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (dtype, repr(tuple(shape)))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), "d" if dtype == "<f8" else "q"), *vals))
s = 12345
def rnd():
    global s
    s = (1103515245 * s + 12345) % 2**31
    return s / 2**31 - 0.5
x = [rnd() for _ in range(64 * 8)]
y = [int(sum(x[i * 8:i * 8 + 4]) > sum(x[i * 8 + 4:i * 8 + 8])) for i in range(64)]
npy(sys.argv[1] + "/x.npy", (64, 8), "<f8", x)
npy(sys.argv[1] + "/y.npy", (64,), "<i8", y)
PY
args=(examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2,L=1 --width D=8 --widths 8,16
      --lrs 1e-3:1e-2:3 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 5 --jobs 2 --csv "$tmp/s.csv")
out=$("$bin" sweep "${args[@]}" 2>&1)
rows=$(tail -n +2 "$tmp/s.csv" | wc -l)
[ "$rows" = 12 ]; check $? "a 2 x 3 x 2 grid writes 12 rows (got $rows)"
grep -q "^param,width,depth,lr,seed,loss,settings$" "$tmp/s.csv"; check $? "the CSV's header"
out2=$("$bin" sweep "${args[@]}" --plot "$tmp/s.png" 2>&1)
rows2=$(tail -n +2 "$tmp/s.csv" | wc -l)
echo "$out2" | grep -q "12 already in" && [ "$rows2" = 12 ]; check $? "run again, the sweep resumes: nothing trained twice"
# the pictures (gnuplot-nox in CI): a PNG file, said on the terminal
# a resumed sweep takes only rows trained the same way: other --steps are
# another experiment (refused, the file untouched), and so is a CSV that is
# not a sweep's; a row cut off by an interrupted write is skipped
cp "$tmp/s.csv" "$tmp/s_before.csv"
other=$("$bin" sweep "${args[@]/--steps/--steps}" --steps 6 2>&1); rc=$?
[ $rc = 1 ] && echo "$other" | grep -q "trained with other settings" && cmp -s "$tmp/s.csv" "$tmp/s_before.csv"
check $? "a sweep with other --steps refuses the CSV of the first (and leaves it as it was)"
printf 'step,loss\n1,2.5\n' > "$tmp/log.csv"
notsweep=$("$bin" sweep "${args[@]/$tmp\/s.csv/$tmp\/log.csv}" 2>&1); rc=$?
[ $rc = 1 ] && echo "$notsweep" | grep -q "is not a sweep's CSV" && [ "$(cat "$tmp/log.csv")" = "$(printf 'step,loss\n1,2.5')" ]
check $? "a CSV that is not a sweep's is refused, not overwritten"
head -c -12 "$tmp/s_before.csv" > "$tmp/cut.csv"
cut=$("$bin" sweep "${args[@]/$tmp\/s.csv/$tmp\/cut.csv}" 2>&1)
echo "$cut" | grep -q "11 already in" && [ "$(grep -cE ",[0-9a-f]{16}$" "$tmp/cut.csv")" = 12 ] && [ "$(wc -l < "$tmp/cut.csv")" = 14 ]
check $? "a row cut off is trained again, on a line of its own"
is_png() { [ "$(head -c 8 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
is_png "$tmp/s.png" && echo "$out2" | grep -q "wrote $tmp/s.png"; check $? "--plot draws loss against learning rate as a PNG"
# a depth sweep: each depth in the progress lines and the table, one curve
# per depth in the picture
outd=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2 --width D=8 --widths 8 \
      --depth L=1 --depths 1,2 --lrs 1e-3:1e-2:2 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 3 \
      --csv "$tmp/d.csv" --plot "$tmp/d.png" 2>&1)
echo "$outd" | grep -q "width 8 depth 2 lr" && echo "$outd" | grep -Eq "^8 +2 +[0-9]" && is_png "$tmp/d.png"
check $? "a depth sweep names the depth of each run and each table row, and draws a PNG"
# --param derived: only the derived runs, the standard column "-"
outp=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2,L=1 --width D=8 --widths 8 \
      --lrs 1e-3:1e-2:2 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 3 --param derived --csv "$tmp/p.csv" 2>&1)
[ "$(tail -n +2 "$tmp/p.csv" | cut -d, -f1 | sort -u)" = 1 ] && [ "$(tail -n +2 "$tmp/p.csv" | wc -l)" = 2 ] &&
  echo "$outp" | grep -Eq "^8 +- +- +[0-9]"
check $? "--param derived trains the derived parametrization only"
# width 8 is the base: both parametrizations train the same model
python3 - "$tmp/s.csv" <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
sp = {(r[1], r[3]): r[5] for r in rows if r[0] == "0" and r[1] == "8"}
de = {(r[1], r[3]): r[5] for r in rows if r[0] == "1" and r[1] == "8"}
sys.exit(0 if sp and sp == de else 1)
PY
check $? "at the base width the standard and derived runs agree"
# the fit: losses (log2 lr - log2 0.01)^2 + 1 (derived) and centered at 0.002 (standard)
python3 - "$tmp/fit.csv" <<'PY'
import sys, math
with open(sys.argv[1], "w") as f:
    f.write("param,width,depth,lr,seed,loss\n")
    for p, c in ((0, 0.002), (1, 0.01)):
        for w in (8, 16):
            for i in range(5):
                lr = 1e-3 * (10 ** 0.5) ** i
                f.write("%d,%d,0,%.9g,0,%.9g\n" % (p, w, lr, (math.log2(lr) - math.log2(c)) ** 2 + 1))
PY
fit=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2,L=1 --width D=8 --widths 8,16 \
     --lrs 1e-3:1e-1:5 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 5 --csv "$tmp/fit.csv" 2>&1)
echo "$fit" | grep -Eq "^16 +- +0\.002 .*0\.01 " ; check $? "the optimum is the parabola's vertex (0.002 standard, 0.01 derived)"
# on the grid's first three points the derived optimum (0.01) is the last: marked
edge=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2,L=1 --width D=8 --widths 8,16 \
     --lrs 1e-3:1e-2:3 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 5 --csv "$tmp/fit.csv" 2>&1)
echo "$edge" | grep -Eq "^16 +- +0\.002 +\(.*0\.01 +\*" && echo "$edge" | grep -q "the grid's first or last"
check $? "an optimum on the grid's edge is marked, and the table says to widen --lrs"
# how far the optimum moves over the widths, and its spread over the seeds:
# four seeds that agree (derived: 0.01 at width 8, 0.02 at 16, a move of 1)
# leave no spread; seeds that disagree (standard: seed s centered at
# 0.002 * 2^(s/2) at width 16) give an interval around the move
python3 - "$tmp/seeds.csv" <<'PY'
import sys, math
with open(sys.argv[1], "w") as f:
    f.write("param,width,depth,lr,seed,loss\n")
    for s in range(4):
        for w in (8, 16):
            for i in range(5):
                lr = 1e-3 * (10 ** 0.5) ** i
                cd, cs = (0.01 if w == 8 else 0.02), 0.002 * (2 ** (s / 2) if w == 16 else 1)
                f.write("1,%d,0,%.9g,%d,%.9g\n" % (w, lr, s, (math.log2(lr) - math.log2(cd)) ** 2 + 1))
                f.write("0,%d,0,%.9g,%d,%.9g\n" % (w, lr, s, (math.log2(lr) - math.log2(cs)) ** 2 + 1))
PY
mv=$("$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=16,I=8,C=2,L=1 --width D=8 --widths 8,16 \
     --lrs 1e-3:1e-1:5 --seeds 4 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --steps 5 --csv "$tmp/seeds.csv" 2>&1)
line=$(echo "$mv" | grep "the optimum moves over the widths")
echo "  $line"
echo "$line" | grep -q "derived 1.00 (1.00 to 1.00)" && echo "$mv" | grep -q "draws of the 4 seeds" &&
  python3 -c "
import re, sys
m = re.search(r'standard ([0-9.]+) \(([0-9.]+) to ([0-9.]+)\)', sys.argv[1])
sys.exit(0 if m and float(m[2]) < float(m[1]) < float(m[3]) else 1)" "$line"
check $? "the optimum's move over the widths, with a seed-bootstrap interval (none when the seeds agree)"
# the coordinate check: the hidden product's output RMS after 10 steps grows
# with the width under the standard parametrization, not under the derived
"$bin" sweep examples/mlp_classifier.lean --entry residualMlpLoss --size B=64,I=8,C=2,L=1 --width D=16 --widths 16,128 \
  --coord 1e-2 --steps 10 --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --csv "$tmp/coord.csv" --plot "$tmp/coord.png" \
  > "$tmp/coord.txt" 2>&1
is_png "$tmp/coord.png"; check $? "--coord --plot draws the coordinate check as a PNG"
python3 - "$tmp/coord.csv" <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
rms = {(r[0], r[1], r[5]): float(r[8]) for r in rows}
sp = rms[("0", "128", "1")] / rms[("0", "16", "1")]
de = rms[("1", "128", "1")] / rms[("1", "16", "1")]
print("  hidden product RMS, width 128 over 16: standard %.2f, derived %.2f" % (sp, de))
sys.exit(0 if sp > 1.4 and 0.7 < de < 1.3 else 1)
PY
check $? "coordinate check: the hidden product grows with the width under the standard parametrization only"
# a training an error stops (width 8 gives the LM D / 16 = 0 heads) is
# said, left out of the CSV (so a rerun trains it again) and of the
# results, and the sweep's status says so; it had been recorded as loss 0
rm -f "$tmp/fail.csv"
"$bin" sweep examples/transformer_lm.lean --entry transformerLMWidthLoss --size B=2,N=8,V=256,L=1 --width D=16 \
  --widths 16,8 --lrs 1e-3,1e-2 --text @licenses --steps 2 --jobs 2 --csv "$tmp/fail.csv" > "$tmp/fail.out" 2> "$tmp/fail.err"
st=$?
[ $st = 1 ] && grep -q "4 of the 8 trainings failed" "$tmp/fail.err" && [ "$(grep -c failed "$tmp/fail.out")" = 4 ] &&
  [ "$(grep -c '^[01],16,' "$tmp/fail.csv")" = 4 ] && ! grep -q '^[01],8,' "$tmp/fail.csv"
check $? "a failed training is said, not written, not a result, and the status is 1 (was loss 0)"
# a second width symbol grows with the swept one (F = 12·w/8); one that
# cannot (13·12/8) is refused
m2=$("$bin" sweep tests/hparams/models.lean --entry biasBlocks --size B=4,L=2 --width D=8,F=13 --widths 8,12 \
    --lrs 1e-3,1e-2 --steps 2 --data x=$tmp/bx.npy --csv "$tmp/two2.csv" --jobs 1 2>&1)
echo "$m2" | grep -q "at width 12, F = 13·12/8 is not a whole size"; check $? "a second width symbol that cannot grow in step is refused"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
