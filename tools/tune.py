"""Time the schedules `tilesmith tune` wrote and remember the fastest.

On a machine with an NVIDIA GPU, PyTorch and the targets (TileLang and/or
Triton):

    python3 tools/tune.py DIR --records tuned.tsv [--budget-ms 200] [--seed 0]

For every module of DIR/manifest.json: fresh inputs (the module's own
random_inputs), its run() checked against its own float32 reference (the
module's compare(): the same tolerance as its __main__), then timed as the
GPU harness times contenders (bench/gpu_harness.py: CUDA-graph replays,
median of triton.testing.do_bench, L2 flushed between runs).  The fastest
module that passed is appended to the records file as one tab-separated
line (key, entry, target, schedule, measured and predicted microseconds,
device, versions, date; src/cli/tuned.c reads it), and every candidate's
predicted and measured time is printed (the cost model's calibration).
Copy the records file to any machine: `tilesmith opt ... --tuned FILE`
uses the schedule there, `--target best` the target.  Exit status 1 when no
module passed.
"""

import argparse
import json
import os
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bench"))


def record_line(man, best, device, versions, date):
    """The record src/cli/tuned.c reads: key, entry, target, schedule,
    measured and predicted microseconds, device, versions, date, by tabs."""
    fields = [man["key"], man["entry"], best["target"], best["schedule"], "%.3f" % (best["ms"] * 1e3),
              "%.3f" % best["predicted_us"], device, versions, date]
    return "\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields)


def versions():
    out = []
    for name in ("torch", "triton", "tilelang"):
        try:
            out.append("%s %s" % (name, __import__(name).__version__))
        except Exception:  # a target missing here: its modules fail below
            pass
    return ", ".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--records", required=True, help="the tab-separated file the winner is appended to")
    ap.add_argument("--budget-ms", type=float, default=200, help="timing budget per module")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import torch
    import gpu_harness as H

    man = json.load(open(os.path.join(args.dir, "manifest.json")))
    timing = types.SimpleNamespace(graph=True, budget_ms=args.budget_ms, launch_budget_ms=0)
    results = []
    for c in man["candidates"]:
        row = dict(c)
        try:
            mod = H.load_module(os.path.join(args.dir, c["module"]))
            inputs = mod.random_inputs(args.seed)
            ref = mod.reference(*[x.float() if x.is_floating_point() else x for x in inputs])
            out = mod.run(*inputs)
            torch.cuda.synchronize()
            ok, err, scale = mod.compare(out, ref)
            row.update(ok=ok, max_err=err)
            if ok:
                res = {}
                H.time_contender(lambda m=mod: m.run(*inputs), inputs, res, timing)
                row.update(res)
        except Exception as e:  # a module that fails to build or run loses
            row.update(ok=False, error="%s: %s" % (type(e).__name__, str(e)[-300:]))
        results.append(row)
        ms = row.get("ms")
        print("%-10s %-22s predicted %9.1f us  measured %s  %s" % (
            c["target"], c["schedule"], c["predicted_us"], "%9.1f us" % (ms * 1e3) if ms else "        -",
            "ok" if row.get("ok") else "FAIL " + row.get("error", "max err %.3g" % row.get("max_err", float("nan")))),
            flush=True)
        torch.cuda.empty_cache()
    good = [r for r in results if r.get("ok") and r.get("ms")]
    if not good:
        print("tune: no module passed its check; nothing recorded")
        return 1
    best = min(good, key=lambda r: r["ms"])
    line = record_line(man, best, torch.cuda.get_device_name(), versions(), time.strftime("%Y-%m-%d"))
    with open(args.records, "a") as f:
        f.write(line + "\n")
    with open(os.path.join(args.dir, "tune_results.json"), "w") as f:
        json.dump({"manifest": man, "results": results, "best": best}, f, indent=1)
    print("tune: %s: %s, schedule %s, %.1f us; appended to %s" % (man["entry"], best["target"], best["schedule"],
                                                                  best["ms"] * 1e3, args.records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
