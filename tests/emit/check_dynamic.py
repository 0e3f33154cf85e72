#!/usr/bin/env python3
"""Modules over free sizes (`tilesmith opt` on a generic definition), on the CPU.

usage: TOOLCHAIN_PYTHON tests/emit/check_dynamic.py ./tilesmith

Needs torch, Triton and TileLang (the toolchain venv's python); no GPU.  For
generic definitions of the examples and of programs written here, and for
both targets, writes the module with `tilesmith opt` (no --size for the free
sizes), imports it and checks that

- the sizes are read from the arguments' shapes, including a size that
  appears only inside a product (`H * D`), and reference() at two different
  shapes agrees with the float64 interpreter (`tilesmith eval`) at those
  sizes: each set of sizes is compiled once (COMPILES), the second call and
  a fresh process find it (memory, then disk: no new build), and another
  dtype or target is another cache entry;
- a size no shape determines must be passed (sizes=...), and is then used;
- a wrong rank, a dimension that contradicts another, a size that is not
  free, and a non-tensor are refused with ValueError/TypeError naming the
  argument, before anything is compiled; correct CPU tensors get through to
  the compiled module's own checks (dtype, then device);
- register() makes one custom op for every shape whose fake implementation
  gives the output's shape at two different shapes on fake CUDA tensors;
- `python3 MODULE.py --size ... --compile-only` builds every kernel for
  sm_90a at those sizes, and a missing size is a usage error;
- opt refuses what it cannot leave free (--target best, --schedule) with a
  usage error.

One line per check, then "N passed, M failed".
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Tally, load_module  # noqa: E402

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "./tilesmith")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
report = Tally()


MIX = """import Tilesmith
open Tilesmith

/-- H heads of width D flattened into the rows of x; the scale is a size
no shape carries. -/
def mix (B H D K : Nat) (x : Tensor [B, H * D]) (w : Param [H * D, D]) : Tensor [B, D] :=
  softmax (x ⬝ w) / sqrt K

/-- A dimension D / H before the one that is D itself: D must come from x
(19), not the smallest D that y's 4 allows (16). -/
def quot (B N D H : Nat) (hs : Tensor [H]) (y : Tensor [B, N, D / H]) (x : Tensor [B, N, D]) : Tensor [B, N, D] :=
  x * 2
"""


def opt(src, entry, target, out, *extra):
    return subprocess.run([BIN, "opt", src, "--entry", entry, "--target", target, "-o", out, *extra],
                          capture_output=True, text=True)


load = load_module


def interp(src, entry, sizes, inputs, tmp):
    """The float64 interpreter's result at these sizes and inputs."""
    cmd = [BIN, "eval", src, "--entry", entry, "--out", os.path.join(tmp, "ref.npy")]
    for n, v in sizes.items():
        cmd += ["--size", f"{n}={v}"]
    for name, x in inputs.items():
        p = os.path.join(tmp, f"in_{name}.npy")
        np.save(p, x.to(torch.float64).numpy())
        cmd += ["--in", f"{name}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return torch.from_numpy(np.load(os.path.join(tmp, "ref.npy")))


def expect_error(what, fn, etype, *words):
    try:
        fn()
    except etype as e:
        msg = str(e)
        report(all(w in msg for w in words), what, f"message {msg!r} lacks one of {words}")
        return
    except Exception as e:  # noqa: BLE001
        report(False, what, f"{type(e).__name__}: {e}")
        return
    report(False, what, "no error")


def check_module(label, mod, src, entry, shapes_a, shapes_b, sizes_a, sizes_b, extra_sizes, tmp):
    names = [a[0] for a in mod._ts_ARGS]
    before = mod.COMPILES
    for shapes, sizes in ((shapes_a, sizes_a), (shapes_b, sizes_b)):
        torch.manual_seed(0)
        args = [torch.randn(s, dtype=torch.float32) for s in shapes]
        try:
            got = mod.bind_sizes(args, extra_sizes)
            ok = got == sizes
            report(ok, f"{label}: sizes read from shapes {shapes}: {got}", f"expected {sizes}")
            ref = mod.reference(*args, sizes=extra_sizes)
            want = interp(src, entry, sizes, dict(zip(names, args)), tmp)
            err = (ref.double() - want).abs().max().item()
            report(tuple(ref.shape) == tuple(want.shape) and err < 1e-4,
                   f"{label}: reference() at {sizes} against the float64 interpreter (max error {err:.2g})",
                   f"shape {tuple(ref.shape)} vs {tuple(want.shape)}")
            mod.reference(*args, sizes=extra_sizes)
        except Exception as e:  # noqa: BLE001
            report(False, f"{label}: reference() at {sizes}", f"{type(e).__name__}: {e}")
    report(mod.COMPILES - before == 2, f"{label}: two shapes compiled once each ({mod.COMPILES - before} builds)")
    return args


def main():
    tmp = tempfile.mkdtemp(prefix="ts_dyn_")
    os.environ["TILESMITH_CACHE"] = os.path.join(tmp, "cache")
    os.environ.pop("TILESMITH", None)
    mix = os.path.join(tmp, "mix.lean")
    with open(mix, "w") as f:
        f.write(MIX)
    softmax = os.path.join(ROOT, "examples/softmax.lean")
    gqa = os.path.join(ROOT, "examples/gqa_decode.lean")
    cases = [
        # (file, entry, shapes at a, at b, sizes at a, at b, sizes= given)
        (softmax, "rowSoftmax", [(8, 33)], [(5, 7)], {"M": 8, "N": 33}, {"M": 5, "N": 7}, None),
        (gqa, "gqaDecode", [(2, 4, 16), (2, 2, 40, 16), (2, 2, 40, 16)], [(1, 8, 8), (1, 2, 24, 8), (1, 2, 24, 8)],
         {"B": 2, "H": 4, "Hkv": 2, "S": 40, "D": 16}, {"B": 1, "H": 8, "Hkv": 2, "S": 24, "D": 8}, None),
        (mix, "mix", [(3, 48), (48, 16)], [(2, 40), (40, 20)], {"B": 3, "H": 3, "D": 16, "K": 9},
         {"B": 2, "H": 2, "D": 20, "K": 9}, {"K": 9}),
        (mix, "quot", [(4,), (1, 2, 4), (1, 2, 19)], [(3,), (2, 1, 5), (2, 1, 15)],
         {"B": 1, "N": 2, "D": 19, "H": 4}, {"B": 2, "N": 1, "D": 15, "H": 3}, None),
    ]
    for target in ("triton", "tilelang"):
        for src, entry, sa, sb, za, zb, extra in cases:
            label = f"{target} {entry}"
            out = os.path.join(tmp, f"{entry}_{target}.py")
            r = opt(src, entry, target, out)
            ok = r.returncode == 0 and "compiled per shape at call time" in r.stdout
            report(ok, f"{label}: opt writes a module over the free sizes", r.stderr.strip())
            if not ok:
                continue
            mod = load(out, f"dyn_{entry}_{target}")
            args = check_module(label, mod, src, entry, sa, sb, za, zb, extra, tmp)
            # a fresh process finds both shapes on disk
            probe = ("import importlib.util, sys, torch\n"
                     f"spec = importlib.util.spec_from_file_location('m', {out!r})\n"
                     "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                     f"for shapes in ({sa!r}, {sb!r}):\n"
                     f"    m.reference(*[torch.randn(s) for s in shapes], sizes={extra!r})\n"
                     "print(m.COMPILES)\n")
            r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
            report(r.returncode == 0 and r.stdout.strip() == "0",
                   f"{label}: a fresh process reads both shapes from the disk cache (no build)",
                   (r.stdout + r.stderr).strip()[-300:])
            # errors, before anything compiles
            n0 = mod.COMPILES
            first = mod._ts_ARGS[0][0]
            bad_rank = [torch.randn(*s, 1) for s in sa]
            expect_error(f"{label}: a wrong rank is a ValueError naming '{first}'",
                         lambda: mod.run(*bad_rank, sizes=extra), ValueError, f"'{first}'", "dimensions")
            expect_error(f"{label}: a non-tensor is a TypeError", lambda: mod.run("x", *args[1:], sizes=extra),
                         TypeError, f"'{first}'")
            expect_error(f"{label}: sizes= naming no free size is a ValueError",
                         lambda: mod.run(*[torch.randn(s) for s in sa], sizes={"Nope": 3}), ValueError, "'Nope'")
            if len(sa) > 1:
                last = mod._ts_ARGS[-1][0]
                shapes = [list(s) for s in sa]
                shapes[-1][-1] += 1
                expect_error(f"{label}: a dimension contradicting another is a ValueError naming '{last}'",
                             lambda: mod.run(*[torch.randn(s) for s in shapes], sizes=extra), ValueError,
                             f"'{last}'")
            if extra:
                expect_error(f"{label}: a size no shape gives must be passed",
                             lambda: mod.run(*[torch.randn(s) for s in sa]), ValueError, "K", "sizes=")
            report(mod.COMPILES == n0, f"{label}: nothing compiled for the refused calls")
            # correct shapes on the CPU reach the compiled module's checks
            expect_error(f"{label}: float32 CPU tensors reach the compiled module's dtype check",
                         lambda: mod.run(*[torch.randn(s) for s in sa], sizes=extra), TypeError, "dtype")
            want = [a[2] for a in mod._ts_ARGS]
            expect_error(f"{label}: storage-dtype CPU tensors reach its device check",
                         lambda: mod.run(*[torch.randn(s).to(t) for s, t in zip(sa, want)], sizes=extra),
                         ValueError, "CUDA device")
            # out= goes through to the compiled module's run(), which checks it
            expect_error(f"{label}: out= of a wrong shape reaches the compiled module's check of it",
                         lambda: mod.run(*[torch.randn(s).to(t) for s, t in zip(sa, want)], sizes=extra,
                                         out=torch.zeros(3, 1, 1)), ValueError, "out=", "shape")
            # register(): one op for every shape, fake shapes at two shapes
            try:
                from torch._subclasses.fake_tensor import FakeTensorMode
                ns = f"tsdyn_{target}"
                op = mod.register(ns, sizes=extra)
                same = mod.register(ns, sizes=extra) is op
                outs = []
                with FakeTensorMode():
                    for shapes, sizes in ((sa, za), (sb, zb)):
                        fake = [torch.empty(s, dtype=t, device="cuda") for s, t in zip(shapes, want)]
                        fo = getattr(getattr(torch.ops, ns), mod.OPNAME)(*fake)
                        outs.append((tuple(fo.shape), mod.output_shape(sizes), fo.dtype))
                ok = same and all(a == b and t == mod._ts_OUT[1] for a, b, t in outs)
                report(ok, f"{label}: register()'s fake output shapes {[o[0] for o in outs]}", f"{outs}")
            except Exception as e:  # noqa: BLE001
                report(False, f"{label}: register()", f"{type(e).__name__}: {e}")
            # compile-only at given sizes
            zs = ",".join(f"{n}={v}" for n, v in za.items())
            r = subprocess.run([sys.executable, out, "--size", zs, "--compile-only", "sm_90a"],
                               capture_output=True, text=True)
            report(r.returncode == 0 and "built" in r.stdout and "FAILED" not in r.stdout,
                   f"{label}: --size {zs} --compile-only sm_90a builds every kernel", (r.stdout + r.stderr)[-400:])
            r = subprocess.run([sys.executable, out, "--compile-only"], capture_output=True, text=True)
            report(r.returncode == 2 and "usage" in r.stderr and "--size needs" in r.stderr,
                   f"{label}: --compile-only without --size is a usage error naming the sizes (stderr)",
                   (r.stdout + r.stderr)[-300:])
    # the key: another dtype is another entry; keys record what they hold
    out = os.path.join(tmp, "softmax_f32.py")
    r = opt(softmax, "rowSoftmax", "triton", out, "--dtype", "f32")
    if r.returncode == 0:
        m32 = load(out, "dyn_softmax_f32")
        m32.reference(torch.randn(8, 33))
        report(m32.COMPILES == 1, "another dtype at the same sizes is built anew")
        dirs = [os.path.join(os.environ["TILESMITH_CACHE"], k) for k in os.listdir(os.environ["TILESMITH_CACHE"])]
        keys = [json.load(open(os.path.join(d, "key.json"))) for d in dirs if os.path.exists(os.path.join(d, "module.py"))]
        report(all({"entry", "sizes", "dtype", "target", "device", "versions", "tilesmith"} <= set(k) for k in keys),
               f"the {len(keys)} cache entries record their keys")
    else:
        report(False, "opt --dtype f32 over free sizes", r.stderr)
    # what opt cannot leave free
    for extra, words in ((["--schedule", "stream=64"], "concrete sizes"),):
        r = opt(softmax, "rowSoftmax", "triton", os.path.join(tmp, "x.py"), *extra)
        report(r.returncode == 2 and words in r.stderr, f"opt {' '.join(extra)} over free sizes is a usage error",
               r.stderr.strip())
    r = opt(softmax, "rowSoftmax", "best", os.path.join(tmp, "x.py"), "--tuned", os.devnull)
    report(r.returncode == 2 and "concrete sizes" in r.stderr, "opt --target best over free sizes is a usage error",
           r.stderr.strip())
    return report.done()


if __name__ == "__main__":
    sys.exit(main())
