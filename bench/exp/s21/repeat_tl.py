"""Is an emitted TileLang module deterministic, kernel by kernel?  Records each
compiled_kernel(name)(...) call of one run(), then relaunches every kernel
REPS times on the same buffers and reports whether its arguments come back
bit-identical (a kernel that reads and writes one buffer is skipped: its
relaunch reads its own output).
usage: python3 bench/exp/s21/repeat_tl.py MODULE.py [REPS]"""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("mod", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
launches = []
real = mod.compiled_kernel


def recording(name):
    k = real(name)

    def go(*a):
        launches.append((name, k, a))
        return k(*a)
    return go


mod.compiled_kernel = recording
args = mod.random_inputs()
out = mod.run(*args)
ref = mod.reference(*args)
torch.cuda.synchronize()
print("first run:", mod.compare(out, ref))
for name, k, a in launches:
    tensors = [t for t in a if isinstance(t, torch.Tensor)]
    base = [t.clone() for t in tensors]
    same, worst, which = True, 0.0, set()
    for _ in range(reps):
        k(*a)
        torch.cuda.synchronize()
        for q, (t, b) in enumerate(zip(tensors, base)):
            if not torch.equal(t, b):
                same = False
                which.add(q)
                worst = max(worst, float((t.double() - b.double()).abs().nan_to_num(0).max()))
    print(f"{name}: {'deterministic' if same else 'DIFFERS between launches, by up to %g (arguments %s)' % (worst, sorted(which))}",
          flush=True)
