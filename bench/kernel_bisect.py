#!/usr/bin/env python3
"""Find the first wrong kernel of an emitted module on the GPU.

usage: python3 bench/kernel_bisect.py [--cpu] MODULE.py [SEED]

--cpu runs a Triton module in Triton's CPU interpreter instead
(tests/emit/interpret.py: meant for modules written with --dtype f32).

`verify` checks a module's tile program kernel by kernel on shrunken
instances in the tile interpreter; this is the same idea for the emitted
code at its full size on the device.  The module's launch sequence
(_ts_run) and its float32 reference (_ts_reference, one statement per graph
node) are re-executed with every local kept: each global temporary tN_op
the kernels write holds graph node N, which the reference computes as vN.
They are compared in launch order (the first launch that mentions a
temporary writes it), each judged relative to the largest |value| of its
reference with the module's tolerance (ATOL), and the first temporary past the tolerance names the kernel at
fault: its inputs, written earlier, were right.  Scratch buffers (split
partials) have no graph node and are skipped; the output is compared last.
One line per temporary, then the verdict.
"""

import importlib.util
import inspect
import os
import re
import sys
import textwrap

import torch


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CPU = "--cpu" in sys.argv
if CPU:
    sys.argv.remove("--cpu")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "emit"))
    import interpret  # noqa: E402  (sets TRITON_INTERPRET before Triton loads)


def keep_locals(mod, fn_name):
    """mod's function fn_name with `return locals()` in place of its return."""
    src = textwrap.dedent(inspect.getsource(getattr(mod, fn_name)))
    if CPU:
        src = src.replace('torch.device("cuda")', 'torch.device("cpu")').replace('device="cuda"', 'device="cpu"')
    lines = src.splitlines()
    last = max(i for i, ln in enumerate(lines) if ln.startswith("    return "))
    lines[last] = "    return locals()"
    ns = {}
    exec(compile("\n".join(lines), f"<{fn_name} keeping locals>", "exec"), mod.__dict__, ns)
    return ns[fn_name]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    path = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    mod = interpret.load(path, 0) if CPU else load(path)
    args = mod.random_inputs(seed)
    run_src = inspect.getsource(mod._ts_run)
    launches = re.findall(r"^\s+(k\d+_\w+)\[.*?\]\((.*)\)$", run_src, re.M)
    order, writer = [], {}
    for kname, argtext in launches:
        for name in re.findall(r"\b(t\d+_\w+)\b", argtext):
            if name not in writer:
                writer[name] = kname
                order.append(name)
    got = keep_locals(mod, "_ts_run")(*args)
    if not CPU:
        torch.cuda.synchronize()
    want = keep_locals(mod, "_ts_reference")(*args)
    # the module's own tolerance (its storage type's), relative to the largest
    # |value|: a float32 temporary computed from bfloat16 operands is judged
    # as the bfloat16 output is
    tol = max(mod.ATOL, mod.RTOL)
    first = None
    for name in order:
        nid = re.match(r"t(\d+)_", name).group(1)
        g, w = got.get(name), want.get("v" + nid)
        if g is None or w is None:
            print(f"  ?    {name} ({writer[name]}): no reference value v{nid}")
            continue
        g = g.float().reshape(-1)
        w = w.float().reshape(-1).to(g.device)
        if g.numel() != w.numel():
            print(f"  ?    {name} ({writer[name]}): {g.numel()} elements, reference {w.numel()}")
            continue
        scale = max(w.abs().max().item(), 1e-30)
        finite = torch.isfinite(w)
        err = (g - w).abs()[finite].max().item() if finite.any() else 0.0
        bad = err / scale > tol or bool((torch.isfinite(g) != finite).any())
        at = int(((g - w).abs().nan_to_num(float("inf")) * finite).argmax().item())
        print(f"  {'BAD ' if bad else 'ok  '} {name} ({writer[name]}): max error {err:.3g} of max |ref| {scale:.3g}"
              f"{f', worst at flat {at}: got {g[at].item():.6g} want {w[at].item():.6g}' if bad else ''}")
        if bad and first is None:
            first = (name, writer[name])
    out = mod._ts_run(*args)
    ok, err, scale = mod.compare(out, mod.reference(*args))
    print(f"  {'ok  ' if ok else 'BAD '} output: max error {err:.3g} of {scale:.3g}")
    if first:
        print(f"first wrong temporary: {first[0]}, written by {first[1]}")
        return 1
    print("every temporary matches its reference" + ("" if ok else " (but the output does not)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
