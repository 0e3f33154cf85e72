#!/usr/bin/env python3
"""`tilesmith grad` against PyTorch autograd, in float64 on the CPU.

usage: python3 tests/grad/torch_check.py ./tilesmith [--seed S]

For each loss below (the example models' and tests/grad/losses.lean's, at
small sizes): draw inputs as tilesmith draws them (bench/gpu_harness.py's
make_inputs), write them as .npy, let `tilesmith grad --in ... --out DIR`
evaluate every Param's gradient in float64, and compare each with
torch.autograd's gradient of the same graph (the harness's graph_fn: the
graph JSON as a PyTorch function).  Normwise: max|a - b| / max|b| <= 1e-10.
One line per loss, then "N passed, M failed".
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

LOSSES = [
    ("examples/mlp_classifier.lean", "residualMlpLoss", "B=8,I=6,D=16,L=3,C=5"),
    ("examples/transformer_lm.lean", "transformerLMLoss", "B=2,N=8,V=16,D=8,H=2,F=16,L=2"),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=4,D=8,V=10"),
    ("tests/grad/losses.lean", "elementwise", "M=3,N=4"),
    ("tests/grad/losses.lean", "shapes", "M=3,N=4"),
]
TOL = 1e-10


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tool")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import torch
    import gpu_harness as H

    tool = os.path.abspath(args.tool)
    passed = failed = 0
    gen = torch.Generator().manual_seed(args.seed)
    for file, entry, sizes in LOSSES:
        what = "%s %s [%s]" % (file, entry, sizes)
        try:
            graph = json.loads(subprocess.run([tool, "graph", file, "--entry", entry, "--size", sizes, "--format", "json"],
                                              cwd=ROOT, check=True, capture_output=True, text=True).stdout)
            inputs = H.make_inputs(graph, torch.float64, gen=gen, device="cpu")
            with tempfile.TemporaryDirectory() as d:
                cmd = [tool, "grad", file, "--entry", entry, "--size", sizes, "--out", os.path.join(d, "grads")]
                for inp, x in zip(graph["inputs"], inputs):
                    path = os.path.join(d, inp["name"] + ".npy")
                    np.save(path, x.numpy())
                    cmd += ["--in", "%s=%s" % (inp["name"], path)]
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
                ours = {inp["name"]: np.load(os.path.join(d, "grads", inp["name"] + ".npy"))
                        for inp in graph["inputs"] if inp["role"] == "param"}
            params = [x.requires_grad_(inp["role"] == "param") for inp, x in zip(graph["inputs"], inputs)]
            loss = H.graph_fn(graph)(*params)
            loss.sum().backward()
            worst, where = 0.0, ""
            for inp, x in zip(graph["inputs"], params):
                if inp["role"] != "param":
                    continue
                ref = x.grad.numpy() if x.grad is not None else np.zeros(x.shape)
                err = np.max(np.abs(ours[inp["name"]] - ref)) / max(np.max(np.abs(ref)), 1e-300)
                if not err <= worst:
                    worst, where = err, inp["name"]
            if worst <= TOL:
                passed += 1
                print("ok   %s: %d Params, largest error %.1e (%s)" % (what, len(ours), worst, where))
            else:
                failed += 1
                print("FAIL %s: %s's gradient differs from autograd's by %.1e (bound %.0e)" % (what, where, worst, TOL))
        except subprocess.CalledProcessError as e:
            failed += 1
            print("FAIL %s: %s" % (what, (e.stderr or "").strip()[:500]))
    # kinks at fixed points: where PyTorch's gradient is NaN or infinite, so is ours
    a = np.array([0.0, 1.0, 4.0, -0.0])
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "a.npy"), a)
        r = subprocess.run([tool, "grad", "tests/grad/losses.lean", "--entry", "absKink", "--in", "a=" + os.path.join(d, "a.npy"),
                            "--out", os.path.join(d, "g")], cwd=ROOT, capture_output=True, text=True)
        ours = np.load(os.path.join(d, "g", "a.npy")) if r.returncode == 0 else None
    x = torch.tensor(a, requires_grad=True)
    (torch.sqrt(torch.abs(x)).sum() + torch.log(torch.abs(x)).sum()).backward()
    ref = x.grad.numpy()
    if ours is not None and np.array_equal(np.isnan(ours), np.isnan(ref)) and np.allclose(ours[~np.isnan(ref)], ref[~np.isnan(ref)]):
        passed += 1
        print("ok   absKink at [0, 1, 4, -0]: %s = autograd's" % ours)
    else:
        failed += 1
        print("FAIL absKink at [0, 1, 4, -0]: ours %s, autograd %s %s" % (ours, ref, r.stderr.strip()[:200]))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
