"""Is an emitted Triton module deterministic?  Records each kernel launch of
one run() (its grid, arguments and options), then relaunches every kernel
REPS times on the same buffers and reports, per kernel, whether its outputs
come back bit-identical, and the module's error against reference() under
other num_stages/num_warps for the last kernel.
usage: python3 bench/exp/s20/repeat.py MODULE.py [REPS]"""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("mod", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
launches = []


class Rec:
    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        def go(*args, **kw):
            launches.append((self.fn, grid, args, kw))
            return self.fn[grid](*args, **kw)
        return go


for fn, *_ in mod.TRITON_KERNELS:
    setattr(mod, fn.__name__, Rec(fn))
args = mod.random_inputs()
out = mod.run(*args)
ref = mod.reference(*args)
torch.cuda.synchronize()
print("first run:", mod.compare(out, ref))
for fn, grid, a, kw in launches:
    tensors = [t for t in a if isinstance(t, torch.Tensor)]
    base = [t.clone() for t in tensors]
    same = True
    for _ in range(reps):
        fn[grid](*a, **kw)
        torch.cuda.synchronize()
        same &= all(torch.equal(t, b) for t, b in zip(tensors, base))
    print(f"{fn.__name__} {grid} {kw}: {'deterministic' if same else 'DIFFERS between launches'}")
fn, grid, a, kw = launches[-1]
for st in (1, 2, 3):
    for nw in (4, 8):
        outs = []
        for _ in range(3):
            fn[grid](*a, **dict(kw, num_stages=st, num_warps=nw))
            torch.cuda.synchronize()
            outs.append(out.clone())
        det = all(torch.equal(outs[0], o) for o in outs[1:])
        print(f"  last kernel num_stages={st} num_warps={nw}: {mod.compare(out, ref)} "
              f"{'deterministic' if det else 'DIFFERS'}")
