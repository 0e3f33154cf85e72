"""Run emitted Triton modules on the CPU, in Triton's interpreter, and check
their output against the module's own float32 PyTorch reference.

usage: python tests/emit/interpret.py MODULE.py...

This is the numerical check of the kernels that needs no GPU: the Triton
interpreter (TRITON_INTERPRET=1) executes each program instance of a
@triton.jit kernel with NumPy.  Its bfloat16 arithmetic is not faithful, so
it is meant for modules compiled with --dtype f32: what it checks is the
kernels' structure (indexing, masks, loop bounds, the online-softmax merge,
split partials and their combine), which does not depend on the storage
type.  The interpreter has no libdevice; the few functions the emitter uses
from it (tanh, erf, pow) are given here over NumPy.

Each module's launch helper (_ts_run: run() without its device checks) is
called with the module's random_inputs() moved to the CPU, for two seeds,
and judged by the module's compare().  One line per module:
"ok   PATH max abs error E" or "FAIL PATH why"; exit status 1 if any failed.
"""
import importlib.util
import math
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime.interpreter import TensorHandle  # noqa: E402


def _wrap(x, a):
    return tl.core.tensor(TensorHandle(np.asarray(a).astype(x.handle.data.dtype), x.handle.dtype), x.type)


def _data(y):
    return y.handle.data if hasattr(y, "handle") else y


class Libdevice:
    """The libdevice functions the emitter calls, for the interpreter."""

    tanh = staticmethod(lambda x: _wrap(x, np.tanh(x.handle.data)))
    erf = staticmethod(lambda x: _wrap(x, np.vectorize(math.erf, otypes=[x.handle.data.dtype])(x.handle.data)))
    pow = staticmethod(lambda x, y: _wrap(x, np.power(x.handle.data, _data(y))))


def load(path, n):
    """The module at path, its device set to the CPU."""
    src = open(path).read().replace('torch.device("cuda")', 'torch.device("cpu")').replace('device="cuda"', 'device="cpu"')
    spec = importlib.util.spec_from_loader(f"interpreted_{n}", loader=None)
    m = importlib.util.module_from_spec(spec)
    exec(compile(src, path, "exec"), m.__dict__)
    if "libdevice" in m.__dict__:
        m.libdevice = Libdevice
    return m


def check(path, n):
    m = load(path, n)
    launch = [v for k, v in vars(m).items() if k.startswith("_") and k.endswith("ts_run") and callable(v)]
    if len(launch) != 1:
        return False, "no launch helper (_ts_run) found"
    worst = 0.0
    for seed in (1, 2):
        args = m.random_inputs(seed)
        out = launch[0](*args)
        ref = m.reference(*args)
        ok, err, scale = m.compare(out, ref)
        if not ok:
            return False, f"seed {seed}: max abs error {err:.3g} (reference scale {scale:.3g}), beyond tolerance"
        worst = max(worst, err)
    return True, f"max abs error {worst:.3g}"


def main():
    failed = 0
    for n, path in enumerate(sys.argv[1:]):
        try:
            ok, what = check(path, n)
        except Exception as e:  # noqa: BLE001
            ok, what = False, f"{type(e).__name__}: {str(e).strip()[:300]}"
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {path} {what}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
