#!/usr/bin/env python3
"""run()'s argument checks and parameter names, on the CPU.

usage: TOOLCHAIN_PYTHON tests/emit/check_run_args.py ./tilesmith

Needs torch (and Triton and TileLang, to import the modules of both
targets): the toolchain venv's python (tools/toolchain/install_here.sh); no
GPU.  For each case below and each target, writes the module with
`tilesmith opt`, imports it and checks that

- run()'s and reference()'s parameters are the Lean parameter names, spelled
  for Python where Python cannot take them (the names below are the spec:
  x' -> x_prime, pass -> pass_, W₁ -> W1, α -> alpha; torch, i, k kept);
- run() refuses, for every argument in turn, a tensor of the wrong shape with
  the same element count, the wrong dtype (int32 for an Index tensor), a
  non-contiguous view of the right shape and something that is not a tensor,
  with the exception type the module documents and a message that names the
  argument as the Lean source does (and the expected and given shape/dtype);
- run() given correct tensors on the CPU (positionally and by keyword) gets
  past every other check and refuses them for their device, naming the first
  argument (devices are checked last, so that this machine reaches the rest);
- reference() takes the same arguments, checks their shapes and runs on the CPU;
- register() makes the custom op torch.ops.tilesmith_<target>.<entry> (once:
  a second call returns it), whose fake implementation gives the output's
  shape and dtype on fake CUDA tensors, and which refuses CPU tensors.

The inputs are built from `tilesmith graph --format json` (shapes, Index or
not), not from the module.  One line per check, then "N passed, M failed".
"""

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (file, entry, sizes, dtype, run()'s parameter names)
CASES = [
    ("examples/attention.lean", "attention", "B=2,H=2,N=8,D=4", "bf16", ["q", "k", "v"]),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=6,D=8,V=10", "f32", ["h", "W", "targets"]),
    ("tests/emit/awkward_names.lean", "awkwardNames", "", "bf16",
     ["x_prime", "pass_", "W1", "torch", "i", "k", "alpha", "_ts_check", "t"]),
    ("tests/emit/awkward_names.lean", "referenceNames", "", "bf16", ["v0", "v1"]),
    ("tests/emit/awkward_names.lean", "shiftedIds", "", "bf16", ["t"]),
]
DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32}

counts = {"passed": 0, "failed": 0}


def report(ok, what, detail=""):
    counts["passed" if ok else "failed"] += 1
    print(f"{'ok  ' if ok else 'FAIL'} {what}{'  ' + detail if detail else ''}", flush=True)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def expect(what, fn, exc, needles):
    """fn() must raise exc (exactly that class) with every needle in its message."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class is what is checked
        msg = str(e)
        missing = [n for n in needles if n not in msg]
        ok = type(e) is exc and not missing
        detail = f"{type(e).__name__}: {msg}"
        if missing:
            detail += f"  (message lacks {missing})"
        report(ok, what, detail if not ok or os.environ.get("VERBOSE") else "")
        return msg if ok else None
    report(False, what, f"no exception (expected {exc.__name__})")
    return None


def wrong_shape(shape):
    """A different shape with the same number of elements: reversed, or else
    flattened (or, of rank 1, made a row)."""
    if tuple(reversed(shape)) != tuple(shape):
        return tuple(reversed(shape))
    n = 1
    for d in shape:
        n *= d
    return (n,) if len(shape) != 1 else (1, n)


def non_contiguous(shape, dtype):
    """A view of the right shape that is not contiguous: a transposed view
    where the last two dimensions allow, else every other element."""
    if len(shape) >= 2 and shape[-1] > 1 and shape[-2] > 1:
        base = torch.zeros(*shape[:-2], shape[-1], shape[-2], dtype=dtype)
        return base.transpose(-1, -2)
    return torch.zeros(*shape, 2, dtype=dtype)[..., 0]


def check_case(tool, out_dir, path, entry, sizes, dtype, names, target, messages):
    label = f"{target} {entry}"
    mod_path = os.path.join(out_dir, f"{entry}_{target}.py")
    size_args = ["--size", sizes] if sizes else []
    r = subprocess.run([tool, "opt", path, "--entry", entry, "--dtype", dtype, "--target", target, "-o", mod_path]
                       + size_args, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        report(False, f"opt {label}", r.stderr.strip()[:500])
        return
    graph = json.loads(subprocess.run([tool, "graph", path, "--entry", entry, "--format", "json"] + size_args,
                                      cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    try:
        mod = load(mod_path, f"runargs_{entry}_{target}")
    except Exception as e:  # noqa: BLE001
        report(False, f"import {label}", f"{type(e).__name__}: {e}")
        return
    if entry == "attention":  # the module's command line: bad options are usage errors, not tracebacks
        for argv, needle in ((["--compile-only", "foo"], "takes one architecture"), (["--warm"], "has none")):
            if argv == ["--warm"] and torch.cuda.is_available():
                continue
            p = subprocess.run([sys.executable, mod_path] + argv, capture_output=True, text=True)
            report(p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr,
                   f"{label}: python3 MODULE.py {' '.join(argv)} is a usage error", p.stderr.strip()[-300:])
    nodes = {n["id"]: n for n in graph["nodes"]}
    lean = [x["name"] for x in graph["inputs"]]
    shapes = [tuple(nodes[x["node"]]["shape"]) for x in graph["inputs"]]
    index = [x["role"] == "index" for x in graph["inputs"]]
    want = [torch.int64 if ix else DTYPES[dtype] for ix in index]
    good = [torch.zeros(s, dtype=t) for s, t in zip(shapes, want)]

    outkw = "out"
    while outkw in names:
        outkw += "_"
    for fn in ("run", "reference"):
        sig = inspect.signature(getattr(mod, fn)).parameters
        got = list(sig)
        expect_names = names + [outkw] if fn == "run" else names
        ok = got == expect_names and (fn != "run" or sig[outkw].kind == inspect.Parameter.KEYWORD_ONLY)
        report(ok, f"{label}: {fn}() parameters are {expect_names}", "" if ok else f"got {got}")

    for p, (name, shape, dt) in enumerate(zip(lean, shapes, want)):
        def call(bad, p=p):
            args = list(good)
            args[p] = bad
            return lambda: mod.run(*args)
        bad_shape = wrong_shape(shape)
        m = expect(f"{label}: run() refuses '{name}' of shape {bad_shape} (same element count)",
                   call(torch.zeros(bad_shape, dtype=dt)), ValueError, [f"'{name}'", str(shape), str(bad_shape)])
        messages.setdefault("shape", m)
        other = torch.int32 if dt == torch.int64 else (torch.float32 if dt != torch.float32 else torch.bfloat16)
        m = expect(f"{label}: run() refuses '{name}' in {other}", call(torch.zeros(shape, dtype=other)), TypeError,
                   [f"'{name}'", str(dt), str(other)] + (["int32 is not accepted"] if dt == torch.int64 else []))
        messages.setdefault("index dtype" if dt == torch.int64 else "dtype", m)
        view = non_contiguous(shape, dt)
        if view.is_contiguous():
            report(False, f"{label}: test setup: no non-contiguous view of shape {shape}")
        else:
            m = expect(f"{label}: run() refuses a non-contiguous '{name}'", call(view), ValueError,
                       [f"'{name}'", "contiguous"])
            messages.setdefault("layout", m)
        m = expect(f"{label}: run() refuses '{name}' as a list", call(good[p].tolist()), TypeError,
                   [f"'{name}'", "torch.Tensor", "list"])
        messages.setdefault("type", m)
        if p == 0:  # reference() checks shapes too
            args = list(good)
            args[p] = torch.zeros(bad_shape, dtype=dt)
            expect(f"{label}: reference() refuses '{name}' of shape {bad_shape}", lambda a=args: mod.reference(*a),
                   ValueError, [f"'{name}'", str(shape)])

    # out=: an output buffer of the output's shape and dtype, checked like the
    # arguments (devices last: a CPU out= reaches every other check first)
    out_shape = tuple(nodes[graph["output"]]["shape"])
    # the output's dtype: the storage type, int64 for an Index result
    out_dt = {"int": torch.int64, "bool": torch.bool}.get(nodes[graph["output"]].get("kind", "real"), DTYPES[dtype])
    cases = [(torch.zeros(wrong_shape(out_shape) if len(out_shape) > 1 else (out_shape[0] + 1,) if out_shape else (2,),
                          dtype=out_dt), ValueError, ["out", "shape"]),
             (torch.zeros(out_shape, dtype=torch.float64), TypeError, ["out", "dtype"]),
             ([0.0], TypeError, ["out", "torch.Tensor"])]
    nc = non_contiguous(out_shape, out_dt) if len(out_shape) >= 1 else None
    if nc is not None and not nc.is_contiguous():
        cases.append((nc, ValueError, ["out", "contiguous"]))
    for bad, exc, words in cases:
        m = expect(f"{label}: run() refuses {outkw}= {type(bad).__name__} {getattr(bad, 'dtype', '')} "
                   f"{tuple(getattr(bad, 'shape', ()))}", lambda b=bad: mod.run(*good, **{outkw: b}), exc,
                   [outkw + "="] + words[1:])
        messages.setdefault(f"out= {exc.__name__}", m)
    expect(f"{label}: run() with a good CPU {outkw}= still refuses the CPU arguments for their device",
           lambda: mod.run(*good, **{outkw: torch.zeros(out_shape, dtype=out_dt)}), ValueError, [f"'{lean[0]}'", "CUDA device"])

    # correct but on the CPU: every other check passes; the device is refused
    m = expect(f"{label}: run() refuses CPU tensors for their device", lambda: mod.run(*good), ValueError,
               [f"'{lean[0]}'", "CUDA device", "cpu"])
    messages.setdefault("device", m)
    expect(f"{label}: run() by keyword reaches the device check", lambda: mod.run(**dict(zip(names, good))),
           ValueError, [f"'{lean[0]}'", "CUDA device"])
    # reference() runs on the CPU with the same arguments (any dtype)
    try:
        out = mod.reference(*[x if ix else x.float() for x, ix in zip(good, index)])
        want_shape = tuple(nodes[graph["output"]]["shape"])
        # a real result in float32; an Index result in int64 (exact), a mask in bool
        kind = nodes[graph["output"]].get("kind", "real")
        want_dt = {"int": torch.int64, "bool": torch.bool}.get(kind, torch.float32)
        ok = out.dtype == want_dt and tuple(out.shape) == want_shape
        report(ok, f"{label}: reference() runs on the CPU", "" if ok else f"{out.dtype} {tuple(out.shape)}")
    except Exception as e:  # noqa: BLE001
        report(False, f"{label}: reference() runs on the CPU", f"{type(e).__name__}: {e}")
    # register(): a custom op whose fake implementation gives the output's
    # shape and dtype (what torch.compile traces with), on fake CUDA tensors
    ns = f"tilesmith_{target}"
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode

        op = mod.register(ns)
        again = mod.register(ns) is op
        want_shape = tuple(nodes[graph["output"]]["shape"])
        with FakeTensorMode():
            fake = [torch.empty(s, dtype=t, device="cuda") for s, t in zip(shapes, want)]
            fo = getattr(getattr(torch.ops, ns), entry)(*fake)
            # the out= variant: mutates its last argument, returns nothing
            none = getattr(getattr(torch.ops, ns), entry + "_out")(*fake, torch.empty(want_shape, dtype=out_dt,
                                                                                         device="cuda"))
        ok = none is None and again and tuple(fo.shape) == want_shape and fo.dtype == out_dt and fo.device.type == "cuda"
        report(ok, f"{label}: register() makes torch.ops.{ns}.{entry}, its fake output {want_shape}",
               "" if ok else f"again={again} {fo.dtype} {tuple(fo.shape)} {fo.device}")
    except Exception as e:  # noqa: BLE001
        report(False, f"{label}: register() makes torch.ops.{ns}.{entry}", f"{type(e).__name__}: {e}")
    # the fake implementation checks the shapes it was compiled for; another
    # namespace is another op; another module of the entry (the other target,
    # registered before this one) is refused in a namespace this one holds
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            bad = [torch.empty(wrong_shape(s) if len(s) > 1 else (s[0] + 1,) if s else (2,), dtype=t, device="cuda")
                   for s, t in zip(shapes, want)]
            expect(f"{label}: the op's fake implementation refuses the wrong shape",
                   lambda: getattr(getattr(torch.ops, ns), entry)(*bad), ValueError, [f"'{lean[0]}'", "shape"])
        other = mod.register(ns + "_b")
        report(other is not mod.register(ns), f"{label}: register() in another namespace is another op")
        if target == "triton":  # the TileLang module of the entry registered tilesmith_tilelang first
            expect(f"{label}: register() where another module registered '{entry}' is refused",
                   lambda: mod.register("tilesmith_tilelang"), RuntimeError, ["registered already", "namespace"])
    except Exception as e:  # noqa: BLE001
        report(False, f"{label}: register()'s namespaces and fake shapes", f"{type(e).__name__}: {e}")
    try:
        getattr(getattr(torch.ops, ns), entry)(*good)
        report(False, f"{label}: the op refuses CPU tensors (it has a CUDA implementation only)", "it ran")
    except NotImplementedError:
        report(True, f"{label}: the op refuses CPU tensors (it has a CUDA implementation only)")
    except Exception as e:  # noqa: BLE001
        report(False, f"{label}: the op refuses CPU tensors", f"{type(e).__name__}: {e}")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = os.path.abspath(sys.argv[1])
    messages = {}
    with tempfile.TemporaryDirectory(prefix="tilesmith-runargs-") as out_dir:
        for path, entry, sizes, dtype, names in CASES:
            for target in ("tilelang", "triton"):
                check_case(tool, out_dir, path, entry, sizes, dtype, names, target, messages)
    print("messages, one of each kind:")
    for kind, m in messages.items():
        print(f"  {kind}: {m}")
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
