#!/usr/bin/env bash
# Session 19's device inputs (run here; carry .whl and bench/out):
#   bench/out: the benchmark set (bench/cases.txt, the defaults of both
#   targets) and four cases beside it (cases_extra.txt): the unfused halves of
#   rmsnorm_matmul_16k (its RMSNorm rows and its product as programs of their
#   own) and layer norm -> linear, wide and narrow, with the search's first two
#   runner-up plans (cand1, cand2), so that the cost model's choice between one
#   kernel and two is measured; and split-K's Triton kernel under copy=1
#   (descriptors), which asked for more shared memory than the H200 has
#   before the cost model counted its staged store (triton-tma).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:-./tilesmith}
bench/prepare.sh "$bin"
OUT=/tmp/s19_extra CASES=bench/exp/s19/cases_extra.txt CANDIDATES=2 bench/prepare.sh "$bin"
mv /tmp/s19_extra/manifest.json /tmp/s19_extra.manifest.json
cp /tmp/s19_extra/*.py /tmp/s19_extra/*.json bench/out/
python3 - <<'PY'
import json
m = json.load(open("bench/out/manifest.json"))
x = json.load(open("/tmp/s19_extra.manifest.json"))
for c in x["cases"]:
    if not c["name"].startswith("ln_linear"):  # the halves: defaults only
        for v in [v for v in c["modules"] if "cand" in v]:
            for key in ("modules", "predicted_us", "plans"):
                c.get(key, {}).pop(v, None)
m["cases"] += x["cases"]
for c in m["cases"]:
    if c["name"] == "matmul_256_k131072":
        c["modules"]["triton-tma"] = "matmul_256_k131072_triton-tma.py"
json.dump(m, open("bench/out/manifest.json", "w"), indent=1)
print(len(m["cases"]), "cases")
PY
"$bin" opt examples/matmul_large_k.lean --entry matmul_256_k131072 --schedule copy=1 --target triton \
  -o bench/out/matmul_256_k131072_triton-tma.py
# the plans' kernels and their predicted times, for bench/kernel_times.py
python3 - "$bin" <<'PY'
import json, subprocess, sys
m = json.load(open("bench/out/manifest.json"))
for c in m["cases"]:
    out = subprocess.run([sys.argv[1], "explain", c["file"], "--entry", c["entry"], "--json"],
                         capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    keep = {"kernels": [{"name": k["name"], "predicted_us": k["predicted_us"]} for k in d["kernels"]]}
    json.dump(keep, open(f"bench/out/{c['name']}.explain.json", "w"))
PY
