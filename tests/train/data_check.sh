#!/usr/bin/env bash
# tilesmith train's data readers (src/train/data.c): CSV with a header,
# column selection and a divisor, gzip-compressed CSV, .npy, the Debian
# corpora (@digits from python3-sklearn, @licenses from base-files), and
# the errors of data that does not fit.  Each reader is checked through a
# short training whose first logged loss must match the one from the same
# data given as .npy (the same rows in the same order give the same loss).
# usage: tests/train/data_check.sh ./tilesmith   Prints "N passed, M failed".
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
check() { if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok   $2"; else fail=$((fail + 1)); echo "FAIL $2"; fi; }
python3 - "$tmp" <<'PY'
import sys, struct, gzip
d = sys.argv[1]
s = 7
def rnd():
    global s
    s = (1103515245 * s + 12345) % 2**31
    return s / 2**31
rows = [[round(16 * rnd()) for _ in range(8)] + [int(3 * rnd())] for _ in range(32)]
text = "a,b,c,d,e,f,g,h,label\n" + "".join(",".join(str(v) for v in r) + "\n" for r in rows)
open(d + "/t.csv", "w").write(text)
with gzip.open(d + "/t.csv.gz", "wt") as f:
    f.write(text)
def npy(path, shape, code, dtype, vals):
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (dtype, repr(tuple(shape)))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), code), *vals))
npy(d + "/x.npy", (32, 8), "d", "<f8", [v / 16 for r in rows for v in r[:8]])
npy(d + "/y.npy", (32,), "q", "<i8", [r[8] for r in rows])
open(d + "/bad.csv", "w").write("1,2,3\n4,5\n")
npy(d + "/xnan.npy", (32, 8), "d", "<f8", [v / 16 for r in rows for v in r[:8]][:-1] + [float("nan")])
npy(d + "/yhalf.npy", (32,), "d", "<f8", [r[8] + (0.5 if i == 3 else 0) for i, r in enumerate(rows)])
npy(d + "/y3.npy", (32,), "q", "<i8", [3 if i == 5 else r[8] for i, r in enumerate(rows)])
open(d + "/t_bom.csv", "w", encoding="utf-8-sig").write("".join(",".join(str(v) for v in r) + "\n" for r in rows))
npy(d + "/xrev.npy", (32, 8), "d", "<f8", [v / 16 for r in rows for v in r[7::-1]])
open(d + "/ragged.csv", "w").write("".join(",".join(str(v) for v in r + ([1] if i == 3 else [])) + "\n" for i, r in enumerate(rows)))
import os
os.makedirs(d + "/initT", exist_ok=True)
npy(d + "/initT/Wout.npy", (3, 16), "d", "<f8", [0.01] * 48)
open(d + "/quoted.csv", "w").write("".join(",".join('"%s"' % v for v in r) + ", \n  \n" for r in rows))
open(d + "/low.txt", "w").write("0123 4567 89 " * 20)
open(d + "/high.txt", "w").write("0123 4567 89 " * 20 + "x")
PY
# the small residual MLP every reader check trains for one step
small=(examples/mlp_classifier.lean --entry residualMlpLoss --size B=32,I=8,D=16,L=1,C=3 --steps 1)
first() { "$bin" train "${small[@]}" "$@" 2>&1 |
          sed -n 's/^step *1\/1 *loss \([0-9.]*\).*/\1/p'; }
ref=$(first --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy")
[ -n "$ref" ]; check $? ".npy rows train (loss $ref)"
got=$(first --data "x=$tmp/t.csv:0-7/16" --data "labels=$tmp/t.csv:8")
[ "$got" = "$ref" ]; check $? "CSV with a header, columns 0-7 divided by 16 and column 8: the same loss ($got)"
got=$(first --data "x=$tmp/t.csv.gz:0-7/16" --data "labels=$tmp/t.csv.gz:8")
[ "$got" = "$ref" ]; check $? "the same CSV gzip-compressed: the same loss ($got)"
err=$("$bin" train "${small[@]}" --data "x=$tmp/bad.csv" --data "labels=$tmp/y.npy" 2>&1)
echo "$err" | grep -q "bad.csv:2: 2 values where the rows above have 3"; check $? "a ragged CSV: file:line and what is wrong"
err=$("$bin" train "${small[@]}" --data "x=$tmp/t.csv:0-6" --data "labels=$tmp/t.csv:8" 2>&1)
echo "$err" | grep -q "needs rows of 8 elements"; check $? "rows of the wrong width are refused"
if [ -f /usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz ]; then
  out=$("$bin" train examples/mlp_classifier.lean --entry mlp_digits --data x=@digits:0-63/16 --data labels=@digits:64 \
        --steps 40 --lr 3e-3 --log-every 40 2>&1)
  loss=$(echo "$out" | sed -n 's/^final loss \([0-9.]*\)/\1/p')
  python3 -c "import sys; sys.exit(0 if float('$loss' or 9) < 0.5 else 1)"; check $? "@digits (python3-sklearn's table): mlp_digits learns it, loss $loss after 40 steps"
else
  echo "skip @digits: python3-sklearn is not installed"
fi
out=$("$bin" train examples/transformer_lm.lean --entry transformerLMLoss --size B=2,N=16,V=256,D=16,H=2,F=32,L=1 \
      --text @licenses --steps 2 --log-every 1 2>&1)
echo "$out" | grep -q "^final loss"; check $? "@licenses (base-files' license texts) feeds a byte-level language model"
# --batch binds the size the data inputs' first dimension names (B here)
lm=(examples/transformer_lm.lean --entry transformerLMLoss --text @licenses --steps 3 --log-every 1)
a=$("$bin" train "${lm[@]}" --size N=16,V=256,D=16,H=2,F=32,L=1 --batch 3 2>&1 | grep "^step")
b=$("$bin" train "${lm[@]}" --size B=3,N=16,V=256,D=16,H=2,F=32,L=1 2>&1 | grep "^step")
c=$("$bin" train "${lm[@]}" --size B=4,N=16,V=256,D=16,H=2,F=32,L=1 2>&1 | grep "^step")
[ -n "$a" ] && [ "$(echo "$a" | awk '{print $2, $4}')" = "$(echo "$b" | awk '{print $2, $4}')" ] &&
  [ "$(echo "$a" | awk '{print $2, $4}')" != "$(echo "$c" | awk '{print $2, $4}')" ]
check $? "--batch 3 trains what --size B=3 trains (and not B=4's)"
# data a training cannot use is refused by name and row, before training:
# a NaN (it had "diverged"), a label of 4.5 (it had read row 4's gather
# index), an input given twice, a directory for --text
m=$("$bin" train "${small[@]}" --data "x=$tmp/xnan.npy" --data "labels=$tmp/y.npy" 2>&1)
echo "$m" | grep -q "holds nan at row 31, element 7: the data must be finite"; check $? "a NaN in the data is refused where it is"
m=$("$bin" train "${small[@]}" --data "x=$tmp/x.npy" --data "labels=$tmp/yhalf.npy" 2>&1)
echo "$m" | grep -q "holds .* at row 3, element 0: an Index input takes whole numbers"; check $? "a label that is not whole is refused"
# a CSV saved with a UTF-8 byte-order mark and no header (its first row
# had been taken for a header and dropped); columns in the order given; a
# column past the row's end and a ragged row refused also when columns
# are picked
got=$(first --data "x=$tmp/t_bom.csv:0-7/16" --data "labels=$tmp/t_bom.csv:8")
[ -n "$ref" ] && [ "$got" = "$ref" ]; check $? "a CSV behind a byte-order mark reads all its rows ($got)"
want=$(first --data "x=$tmp/xrev.npy" --data "labels=$tmp/y.npy")
got=$(first --data "x=$tmp/t.csv:7,6,5,4,3,2,1,0/16" --data "labels=$tmp/t.csv:8")
[ -n "$want" ] && [ "$got" = "$want" ] && [ "$got" != "$ref" ]; check $? "columns 7,6,...,0 come in that order ($got)"
m=$("$bin" train "${small[@]}" --data "x=$tmp/t.csv:0-6,9" --data "labels=$tmp/t.csv:8" 2>&1)
echo "$m" | grep -q "t.csv:2: column 9 is picked, but the row has 9 values (columns 0-8)"; check $? "a column past the row's end is refused"
m=$("$bin" train "${small[@]}" --data "x=$tmp/ragged.csv:0-7" --data "labels=$tmp/ragged.csv:8" 2>&1)
echo "$m" | grep -q "ragged.csv:4: 10 values where the rows above have 9"; check $? "a ragged row is refused when columns are picked"
# --init: an array of the Param's element count but not its shape (a
# transposed weight) was read row-major; a directory that is not there was
# ignored
m=$("$bin" train "${small[@]}" --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --init "$tmp/initT" 2>&1)
echo "$m" | grep -q "initT/Wout.npy: the array has shape \[3, 16\], but 'Wout' has shape \[D=16, C=3\]"
check $? "an --init array of the wrong shape is refused"
m=$("$bin" train "${small[@]}" --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" --init "$tmp/nonexistent" 2>&1)
echo "$m" | grep -q "nonexistent: no such directory"; check $? "an --init directory that is not there is refused"
# quoted fields, a separator at a line's end and lines of spaces (what
# spreadsheets write) read as the plain CSV
got=$(first --data "x=$tmp/quoted.csv:0-7/16" --data "labels=$tmp/quoted.csv:8")
[ -n "$ref" ] && [ "$got" = "$ref" ]; check $? "quoted fields, trailing separators and blank-looking lines read ($got)"
# a label beyond the classes crossEntropy gathers from: refused when read,
# not when training happens to draw its row; a corpus byte beyond a
# byte-level vocabulary narrower than 256 likewise
m=$("$bin" train "${small[@]}" --data "x=$tmp/x.npy" --data "labels=$tmp/y3.npy" 2>&1)
echo "$m" | grep -q "y3.npy holds 3 at row 5, element 0: 'labels' indexes \[0, 3) (crossEntropy at examples/mlp_classifier.lean:"
check $? "a label out of the classes is refused when the data is read, with its row"
lm100=(examples/transformer_lm.lean --entry transformerLMLoss --size B=2,N=8,V=100,D=16,H=2,F=24,L=1 --steps 1)
m=$("$bin" train "${lm100[@]}" --text "$tmp/high.txt" 2>&1)
echo "$m" | grep -q "high.txt: byte 120 at offset 260 is not below 100, the vocabulary 'ids' indexes (embed at"
check $? "a corpus byte beyond a vocabulary of 100 is refused, with its offset"
"$bin" train "${lm100[@]}" --text "$tmp/low.txt" > /dev/null 2>&1
check $? "a corpus within a vocabulary of 100 trains"
m=$("$bin" train "${small[@]}" --data "x=$tmp/x.npy" --data "x=$tmp/x.npy" 2>&1)
echo "$m" | grep -q -- "--data x is given twice"; check $? "an input given twice is refused"
m=$("$bin" train examples/transformer_lm.lean --entry lm_small --text "$tmp" --steps 1 2>&1)
[ "$m" = "tilesmith: error: --text: $tmp is a directory, not a file" ]; check $? "a directory for --text is said once"
# a batch larger than the data repeats rows: said, not silent
big=$("$bin" train examples/mlp_classifier.lean --entry residualMlpLoss --size B=40,I=8,D=16,L=1,C=3 --steps 1 \
      --data "x=$tmp/x.npy" --data "labels=$tmp/y.npy" 2>&1)
echo "$big" | grep -q "warning: a batch of 40 rows .* more than the 32 rows" && echo "$big" | grep -q "^final loss"
check $? "a batch of 40 from 32 rows trains, with a warning that batches repeat rows"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
