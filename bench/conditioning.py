#!/usr/bin/env python3
"""How far rounding alone moves a graph's result: PyTorch evaluating the graph
in the storage type against float32 PyTorch, with weights drawn normal(0, 1)
and drawn normal(0, 1/fan_in) (tilesmith's rule, src/ir/inputs.c).

usage: tilesmith graph FILE.lean --entry NAME [--size ...] --format json > G.json
       python3 bench/conditioning.py G.json [--device cpu|cuda] [--dtype bf16|f16] [--seed S]

A large error with unit weights and a small one with scaled weights means
the case is ill-conditioned under unit weights for any program in that
storage type, PyTorch's own included (docs/BENCHMARKS.md, transformer_block).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_harness import DTYPES, graph_fn, make_inputs, rel_err  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    g = json.load(open(a.graph))
    f = graph_fn(g)
    for unit in (True, False):
        gen = torch.Generator(device=a.device)
        gen.manual_seed(a.seed)
        args = make_inputs(g, DTYPES[a.dtype], gen, a.device, unit_weights=unit)
        with torch.no_grad():
            ref = f(*[x.float() if x.is_floating_point() else x for x in args])
            got = f(*args)
        print("%-22s %s in %s vs float32: normwise rel err %.3g" % (
            "weights normal(0, 1)" if unit else "weights 1/sqrt(fan_in)", g["entry"], a.dtype, rel_err(got, ref)[0]))


if __name__ == "__main__":
    main()
