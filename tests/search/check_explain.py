#!/usr/bin/env python3
"""`tilesmith explain --format json`: the keys its users read, on examples
and held-out programs.

usage: python3 tests/search/check_explain.py ./tilesmith

For each program: the top level has entry, gpu, dtype, kernels,
global_buffers, rewrites, predicted_us, floor_us, candidates and search
(seconds, stop_reason, iterations, enodes); every kernel has name, nodes,
source_lines, grid, loops, deferred_reductions, reads_bytes, writes_bytes,
flops and predicted_us; every global buffer a role among input, output,
temp and scratch; the kernels' predicted times add up to the total; and the
text and JSON forms name the same kernels.  Then what some plans must show:
RMSNorm -> matmul's sum of squares is deferred past the product's loop
(its state's node listed), attention's key loop is not (its row max is read
in the loop).  --grad explains the backward pass: "backward" is true and
its kernels are those `tiles --grad` prints.  One line per check, then
"N passed, M failed".
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOP = ["entry", "gpu", "dtype", "kernels", "global_buffers", "rewrites", "predicted_us", "floor_us", "candidates",
       "search"]
SEARCH = ["seconds", "stop_reason", "iterations", "enodes", "kernels_priced", "budget"]
KERNEL = ["name", "nodes", "source_lines", "grid", "loops", "deferred_reductions", "reads_bytes", "writes_bytes",
          "flops", "predicted_us"]
ROLES = {"input", "output", "temp", "scratch"}

PROGRAMS = [
    ("examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", None),
    ("examples/attention.lean", "attention_4k", None),
    ("examples/transformer_lm.lean", "lm_small", None),
    ("tests/emit/small_products.lean", "twoSumMatmul", "M=300,K=1000,N=200"),
    ("tests/search/programs.lean", "ln_linear_big", None),
    ("examples/transformer_lm.lean", "lm_small", "--grad"),
]

counts = {"passed": 0, "failed": 0}


def report(ok, what, detail=""):
    counts["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f"  {detail}" if detail else ""), flush=True)


def args(sizes):
    """a program's third field: --size's value, or --grad"""
    return ["--grad"] if sizes == "--grad" else (["--size", sizes] if sizes else [])


def explain(tool, path, entry, sizes, fmt):
    cmd = [tool, "explain", path, "--entry", entry] + args(sizes) + (["--format", "json"] if fmt == "json" else [])
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.strip()[:300]}")
    return r.stdout


def check(tool, path, entry, sizes):
    what = f"{os.path.basename(path)}:{entry}" + (f"[{sizes}]" if sizes else "")
    try:
        d = json.loads(explain(tool, path, entry, sizes, "json"))
        text = explain(tool, path, entry, sizes, "text")
    except (RuntimeError, json.JSONDecodeError) as e:
        report(False, f"explain {what}", str(e))
        return None
    missing = [k for k in TOP if k not in d] + [f"search.{k}" for k in SEARCH if k not in d.get("search", {})]
    for k in d.get("kernels", []):
        missing += [f"{k.get('name', '?')}.{f}" for f in KERNEL if f not in k]
    report(not missing, f"explain {what}: the keys", ", ".join(missing[:8]))
    bad_roles = [b["name"] for b in d.get("global_buffers", []) if b.get("role") not in ROLES]
    report(not bad_roles, f"explain {what}: buffer roles", ", ".join(bad_roles))
    total = sum(k.get("predicted_us", 0) for k in d.get("kernels", []))
    ok = abs(total - d.get("predicted_us", -1)) <= 1e-6 * max(1.0, total)
    report(ok, f"explain {what}: the kernels' times add up", f"{total} against {d.get('predicted_us')}")
    names = [k["name"] for k in d.get("kernels", [])]
    in_text = [n for n in names if f"kernel {n} " in text]
    report(in_text == names, f"explain {what}: text and JSON name the same kernels",
           f"{len(in_text)} of {len(names)} in the text")
    return d


def main():
    tool = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "tilesmith")
    got = {entry + (sizes if sizes == "--grad" else ""): check(tool, path, entry, sizes)
           for path, entry, sizes in PROGRAMS}
    rm = got.get("rmsnorm_matmul_16k")
    if rm:
        prod = [k for k in rm["kernels"] if k["tensor_core_flops"] > 0]
        ok = len(prod) == 1 and len(prod[0]["deferred_reductions"]) == 1 and prod[0]["deferred_reductions"][0] >= 0
        report(ok, "rmsnorm_matmul_16k: the sum of squares deferred past the product's loop (its node named)",
               json.dumps([k["deferred_reductions"] for k in rm["kernels"]]))
    att = got.get("attention_4k")
    if att:
        deferred = [x for k in att["kernels"] for x in k["deferred_reductions"]]
        report(not deferred, "attention_4k: nothing deferred (the row max is read in the key loop)", str(deferred))
    bw = got.get("lm_small--grad")
    if bw:
        r = subprocess.run([tool, "tiles", "examples/transformer_lm.lean", "--entry", "lm_small", "--grad", "--format",
                            "json"], cwd=ROOT, capture_output=True, text=True)
        tiles = [k["name"] for k in json.loads(r.stdout)["kernels"]] if r.returncode == 0 else None
        fwd = got.get("lm_small")
        ok = bw.get("backward") is True and fwd and fwd.get("backward") is False and \
            tiles == [k["name"] for k in bw["kernels"]]
        report(ok, "lm_small --grad: explains the backward pass (the kernels tiles --grad prints)",
               f"{len(bw['kernels'])} kernels, tiles {len(tiles) if tiles else tiles}")
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
