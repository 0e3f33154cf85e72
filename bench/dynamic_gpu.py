#!/usr/bin/env python3
"""Modules over free sizes on a CUDA GPU: run() against reference() at
several shapes, the custom op under torch.compile and in a CUDA graph.

usage: python3 bench/dynamic_gpu.py TILESMITH [--target triton|tilelang ...]

For generic definitions of the examples, writes the module over their free
sizes with `TILESMITH opt` and, for each of a few shapes (small and
full-size), checks run() against reference() with the compiled module's own
tolerance (compare()), then calls register()'s op inside
torch.compile(fullgraph=True) at two shapes and replays it in a CUDA graph,
checking both results.  Prints one line per check and "N passed, M failed"
(the CPU-side checks are tests/emit/check_dynamic.py).
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    # file, generic entry, shapes to run at (a dict of sizes each)
    ("examples/softmax.lean", "rowSoftmax", [{"M": 100, "N": 300}, {"M": 4096, "N": 8192}]),
    ("examples/gqa_decode.lean", "gqaDecode",
     [{"B": 2, "H": 8, "Hkv": 2, "S": 1000, "D": 64}, {"B": 1, "H": 32, "Hkv": 8, "S": 16384, "D": 128}]),
    ("examples/attention.lean", "attention",
     [{"B": 1, "H": 2, "N": 200, "D": 64}, {"B": 2, "H": 8, "N": 2048, "D": 128}]),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", [{"M": 100, "K": 256, "N": 192}, {"M": 4096, "K": 4096, "N": 4096}]),
]
passed = failed = 0


def report(ok, what, why=""):
    global passed, failed
    passed += ok
    failed += not ok
    print(("ok   " if ok else "FAIL ") + what + ("" if ok or not why else ": " + why), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tilesmith")
    ap.add_argument("--target", action="append")
    args = ap.parse_args()
    exe = os.path.abspath(args.tilesmith)
    os.environ["TILESMITH"] = exe
    tmp = tempfile.mkdtemp(prefix="ts_dyngpu_")
    os.environ["TILESMITH_CACHE"] = os.path.join(tmp, "cache")
    for target in args.target or ["triton"]:
        for src, entry, shapes in CASES:
            label = f"{target} {entry}"
            out = os.path.join(tmp, f"{entry}_{target}.py")
            r = subprocess.run([exe, "opt", os.path.join(HERE, src), "--entry", entry, "--target", target, "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                report(False, f"{label}: opt", r.stderr)
                continue
            spec = importlib.util.spec_from_file_location(f"dyn_{entry}_{target}", out)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            for sizes in shapes:
                try:
                    t0 = time.time()
                    inputs = mod.random_inputs(sizes)
                    got = mod.run(*inputs)
                    ref = mod.reference(*inputs)
                    torch.cuda.synchronize()
                    ok, err, scale = mod.specialize(mod.bind_sizes(inputs)).compare(got, ref)
                    report(ok, f"{label} at {sizes}: run() against reference(), max error {err:.3g} "
                               f"(max |ref| {scale:.3g}), {time.time() - t0:.1f}s with the build")
                except Exception as e:  # noqa: BLE001
                    report(False, f"{label} at {sizes}", f"{type(e).__name__}: {str(e)[-800:]}")
            # the custom op under torch.compile at two shapes, then in a CUDA graph
            try:
                op = mod.register(f"dyn_{target}")
                torch._dynamo.reset()  # a fresh compile per case: the recompile limit is per code object
                fn = torch.compile(lambda *a: op(*a) * 1.0, fullgraph=True)
                for sizes in shapes:
                    inputs = mod.random_inputs(sizes)
                    got = fn(*inputs)
                    ref = mod.reference(*inputs)
                    ok, err, _ = mod.specialize(mod.bind_sizes(inputs)).compare(got, ref)
                    report(ok, f"{label} at {sizes}: the op under torch.compile(fullgraph=True), max error {err:.3g}")
                inputs = mod.random_inputs(shapes[0])
                op(*inputs)
                torch.cuda.synchronize()
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    out = op(*inputs)
                fresh = mod.random_inputs(shapes[0], seed=1)
                for x, y in zip(inputs, fresh):
                    x.copy_(y)
                g.replay()
                torch.cuda.synchronize()
                ok, err, _ = mod.specialize(mod.bind_sizes(inputs)).compare(out, mod.reference(*inputs))
                report(ok, f"{label} at {shapes[0]}: the op captured in a CUDA graph and replayed on new inputs, "
                           f"max error {err:.3g}")
            except Exception as e:  # noqa: BLE001
                report(False, f"{label}: register() under torch.compile / CUDA graphs",
                       f"{type(e).__name__}: {str(e)[-800:]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
