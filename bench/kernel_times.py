#!/usr/bin/env python3
"""Time each kernel of emitted modules on the GPU, beside the cost model's
prediction for it.

usage: python3 bench/kernel_times.py DIR CASE[:VARIANT,...] ...

DIR is a prepared benchmark directory (bench/prepare.sh: manifest.json and
the modules); each CASE runs its tilelang and triton modules (or the
variants named after the colon).  A module's launch sequence (_ts_run) runs
REPS times under torch.profiler; every device kernel it starts is listed in
launch order with its median duration over the repetitions (kernel
execution only: the gaps between dependent launches are not in it), and the
sum.  Where DIR holds CASE.explain.json (`tilesmith explain --json`), the
plan's kernels and their predicted microseconds are printed beside, in the
same order (torch's own kernels, such as the fill of a scratch buffer that
starts at a value, appear in the measured column only).

What it answers: which kernel of a multi-kernel program (the language
model, the MLP, the transformer block) loses the time the whole-module
timing of bench/gpu_harness.py shows, and how far each kernel's predicted
time is from its own measurement (the cost model's calibration, kernel by
kernel rather than program by program).
"""

import importlib.util
import json
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

REPS = int(os.environ.get("REPS", "20"))


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def kernel_runs(mod, args):
    """[(name, [microseconds per repetition])] in launch order."""
    for _ in range(3):
        mod._ts_run(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            mod._ts_run(*args)
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    evs.sort(key=lambda e: e.time_range.start)
    if not evs or len(evs) % REPS:
        return [(e.name, [e.time_range.elapsed_us()]) for e in evs]
    per = len(evs) // REPS
    runs = []
    for i in range(per):
        group = [evs[r * per + i] for r in range(REPS)]
        runs.append((group[0].name, [e.time_range.elapsed_us() for e in group]))
    return runs


def pair_plan(runs, plan):
    """The plan kernel (name, predicted us) of each measured kernel: by name
    where the device kernel's name contains the plan kernel's (Triton's), else
    in launch order over the kernels that are not torch's own."""
    byname = [next(((k, u) for k, u in plan if k in rn), None) for rn, _ in runs]
    if any(byname):
        return [b or ("", None) for b in byname]
    rest = iter(plan)
    return [("", None) if "at::" in rn else next(rest, ("", None)) for rn, _ in runs]


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root = sys.argv[1]
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    cases = {c["name"]: c for c in manifest["cases"]}
    status = 0
    for spec in sys.argv[2:]:
        name, _, want = spec.partition(":")
        case = cases.get(name)
        if case is None:
            print(f"{name}: not in {root}/manifest.json")
            status = 1
            continue
        plan = []
        ex = os.path.join(root, name + ".explain.json")
        if os.path.exists(ex):
            plan = [(k["name"], k["predicted_us"]) for k in json.load(open(ex))["kernels"]]
        for variant in want.split(",") if want else ["tilelang", "triton"]:
            path = case["modules"].get(variant)
            if not path:
                continue
            try:
                mod = load(os.path.join(root, path))
                args = mod.random_inputs(0)
                runs = kernel_runs(mod, args)
            except Exception as exc:  # a module that fails is reported, the rest still run
                print(f"{name} {variant}: FAILED {type(exc).__name__}: {str(exc)[:300]}")
                status = 1
                continue
            total = sum(statistics.median(t) for _, t in runs)
            pred = sum(p for _, p in plan)
            print(f"\n{name} {variant}: {len(runs)} device kernels, {total:.1f} us summed"
                  + (f"; the plan's {len(plan)} kernels predicted {pred:.1f} us" if plan else ""))
            print(f"  {'measured kernel':44s} {'median us':>10s}   {'plan kernel':28s} {'predicted':>9s}")
            pairs = pair_plan(runs, plan)
            for (kname, t), (pk, pu) in zip(runs, pairs):
                print(f"  {kname[:44]:44s} {statistics.median(t):10.2f}   {pk[:28]:28s} "
                      + (f"{pu:9.2f}" if pu is not None else ""))
    return status


if __name__ == "__main__":
    sys.exit(main())
