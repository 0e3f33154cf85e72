#!/usr/bin/env python3
"""`opt --grad` modules on a CUDA GPU: apply()'s gradients against
torch.autograd of the float32 reference, and the time of a forward and
backward step against the same step under torch.compile.

usage: python3 bench/grad_gpu.py DIR [SUBSTRING[,SUBSTRING...]]

DIR holds modules written by `tilesmith opt --grad` (NAME.py beside
NAME_backward.py; bench/prepare_grad.sh writes them).  For each module:
random inputs (the module's random_inputs()), real ones as leaves that
require gradients; loss = sum(apply(...) * gy) for a fixed random gy;
loss.backward(); each argument's .grad is judged by the module's compare()
(its storage type's tolerance, relative to the largest reference
gradient) against torch.autograd.grad of reference() in float32 on the same
inputs.  Some networks lose more than that tolerance to 16-bit rounding
wherever it is done (the residual MLP's input gradient: 10% of its largest
value in PyTorch's own bf16, on the CPU in float64 comparisons too), so the
same gradients are also taken from reference() under torch.autocast in the
storage type, PyTorch's mixed precision, and a gradient that misses the
tolerance still passes when its error is at most twice autocast's (both
are printed; a wrong kernel is off by the gradient's own size).  Then the step (forward, backward) is timed with CUDA events,
median of 20, against torch.compile of the reference's step.  One line per
module, then "N passed, M failed".
"""

import glob
import os
import statistics
import sys
import importlib.util

import torch


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def median_ms(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    d = sys.argv[1]
    passed = failed = 0
    for path in sorted(glob.glob(os.path.join(d, "*.py"))):
        if path.endswith("_backward.py") or (len(sys.argv) > 2 and not any(w in path for w in sys.argv[2].split(","))):
            continue
        name = os.path.basename(path)[:-3]
        try:
            mod = load(path)
            # compile every kernel first, in parallel processes (the modules' warm())
            # (a compile still running after 120 s is stopped and named: Triton
            # 3.6's LLVM takes minutes on some whole-row backward kernels)
            if mod.warm(timeout=120) or mod._ts_backward_module().warm(timeout=120):
                raise RuntimeError("a kernel did not compile within 120 s (warm(); its name is above)")
            torch._dynamo.reset()
            inputs = mod.random_inputs(0)
            real = [i for i, x in enumerate(inputs) if x.is_floating_point()]
            leaves = [x.detach().requires_grad_(True) if i in real else x for i, x in enumerate(inputs)]
            y = mod.apply(*leaves)
            gy = torch.randn(y.shape, device=y.device, generator=torch.Generator(device=y.device).manual_seed(7))
            (y.float() * gy).sum().backward()
            ref_in = [x.detach().float().requires_grad_(True) if i in real else x for i, x in enumerate(inputs)]
            yr = mod.reference(*ref_in)
            want = torch.autograd.grad(yr, [ref_in[i] for i in real], gy, allow_unused=True)
            low = inputs[real[0]].dtype
            mixed = [x.detach().float().requires_grad_(True) if i in real else x for i, x in enumerate(inputs)]
            with torch.autocast("cuda", dtype=low, enabled=low in (torch.bfloat16, torch.float16)):
                ym = mod.reference(*mixed)
            peer = torch.autograd.grad(ym.float(), [mixed[i] for i in real], gy, allow_unused=True)
            worst, ok = [], True
            for i, w, pw in zip(real, want, peer):
                w = torch.zeros_like(ref_in[i]) if w is None else w
                pw = torch.zeros_like(ref_in[i]) if pw is None else pw
                good, err, scale = mod.compare(leaves[i].grad, w)
                perr = (pw.float() - w).abs().max().item()
                good = good or err <= 2 * perr
                ok &= good
                worst.append(f"{mod._ts_ARGS[i][0]} {err:.2g}/{scale:.2g} (autocast {perr:.2g}){'' if good else ' WRONG'}")
            fwd_out = y.float()
            good, err, scale = mod.compare(fwd_out, yr.detach())
            ok &= good

            def step():
                for i in real:
                    leaves[i].grad = None
                (mod.apply(*leaves).float() * gy).sum().backward()

            comp = torch.compile(mod.reference)
            ref_leaves = [x.detach().requires_grad_(True) if i in real else x for i, x in enumerate(inputs)]

            def step_compiled():
                for i in real:
                    ref_leaves[i].grad = None
                (comp(*ref_leaves) * gy).sum().backward()

            ours, theirs = median_ms(step), median_ms(step_compiled)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: gradients (max error / max |reference| (autocast's error)) {', '.join(worst)}; "
                  f"step {ours:.3f} ms, torch.compile of the reference (bf16 inputs, float32 compute) "
                  f"{theirs:.3f} ms", flush=True)
            passed += ok
            failed += not ok
        except Exception as e:  # noqa: BLE001
            print(f"FAIL {name}: {type(e).__name__}: {str(e)[-800:]}", flush=True)
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
