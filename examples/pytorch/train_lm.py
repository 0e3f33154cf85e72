#!/usr/bin/env python3
"""Train the small transformer LM of examples/transformer_lm.lean in PyTorch,
its forward and backward passes running as tilesmith's kernels, next to the
same model written in plain PyTorch, and compare the two loss curves.

usage: python3 examples/pytorch/train_lm.py [--tilesmith BIN] [--target triton|tilelang]
           [--mode eager|compile|graphs] [--steps 100] [--lr 3e-3] [--seed 0]
           [--size B=16,N=128,V=256,D=256,H=4,F=704,L=4] [--corpus FILE...]
           [--out DIR] [--csv FILE] [--check]

What it does, in order:

1. `tilesmith opt examples/transformer_lm.lean --entry transformerLMLoss
   --size ... --grad` writes DIR/lm.py (the loss, 33 kernels at the default
   size) and DIR/lm_backward.py (its gradients with respect to every Param,
   recomputing the forward); lm.register_autograd() makes them the custom op
   torch.ops.tilesmith.transformerLMLoss with a backward.
2. Every kernel of both modules is compiled once, in parallel worker
   processes (the modules' warm(): the compiler's disk cache then serves
   the training process).
3. Data: byte-level (vocabulary 256) text from files every checkout has:
   this repository's README, docs and Lean sources (--corpus to use yours).
   Batches are random windows of N+1 bytes, the same for both runs.
4. Both models start from the same float32 weights (normal(0, 1/fan_in)
   matrices, residual outputs scaled by 1/sqrt(2L), unit gains) and take the
   same AdamW steps (betas 0.9, 0.95, no weight decay, 10 warmup steps).
   tilesmith's run casts the float32 weights to bfloat16 for its op, whose
   kernels keep bfloat16 tensors and accumulate in float32; PyTorch's own
   run is the same network written with torch ops (causal
   scaled_dot_product_attention, F.cross_entropy) under bfloat16 autocast.
   --mode graphs (default): the loss under torch.compile(fullgraph=True)
   (tilesmith's op and its backward op traced through their fake
   implementations), and the whole training step (forward, backward, AdamW
   with capturable state) captured once as a CUDA graph and replayed for
   every batch; compile: the same without the CUDA graph; eager: lm.apply()
   without torch.compile.  PyTorch's run is compiled in graphs and compile
   modes alike.
5. Before training, the gradients of the first batch are compared with
   torch.autograd's of the float32 PyTorch model (relative error of each
   Param's gradient, in the Frobenius norm).

Prints the two losses every 10 steps and a summary (largest relative
difference of the curves, mean step time of each); --csv writes every step.
--check exits 1 unless every gradient is within 5%, the curves differ by
at most 1% on average and 3% at any step (bfloat16 kernels against
bfloat16 autocast, and tilesmith's loss is itself a bfloat16 number, 0.6%
apart at 2.7: the curves differ by rounding, not by a wrong gradient,
which would part them at once).  Needs a CUDA GPU, PyTorch and Triton (TileLang for
--target tilelang).
"""

import argparse
import glob
import importlib.util
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PARAMS = ["E", "G1", "Wq", "Wk", "Wv", "Wo", "G2", "Wg", "Wu", "Wd", "Gf", "Wout"]


def parse_size(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def build(args, sz):
    """Write DIR/lm.py and DIR/lm_backward.py with tilesmith opt --grad."""
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, f"lm_{args.target}.py")
    cmd = [args.tilesmith, "opt", os.path.join(ROOT, "examples", "transformer_lm.lean"), "--entry",
           "transformerLMLoss", "--size", ",".join(f"{k}={v}" for k, v in sz.items()), "--target", args.target,
           "--grad", "-o", out]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"train_lm: {' '.join(cmd)} failed:\n{r.stderr}")
    print(r.stdout.strip().replace("\n", "\n  "), f"({time.time() - t0:.1f} s)", flush=True)
    return out


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def corpus(files):
    data = b"".join(open(f, "rb").read() for f in files)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).to(torch.int64)


def init_params(sz, seed):
    """float32 weights, the same for both runs."""
    g = torch.Generator().manual_seed(seed)
    V, D, F_, L = sz["V"], sz["D"], sz["F"], sz["L"]
    res = 1.0 / math.sqrt(2 * L)

    def normal(shape, std):
        return torch.randn(shape, generator=g) * std

    p = {
        "E": normal((V, D), 1.0),
        "G1": torch.ones(L, D),
        "Wq": normal((L, D, D), D ** -0.5),
        "Wk": normal((L, D, D), D ** -0.5),
        "Wv": normal((L, D, D), D ** -0.5),
        "Wo": normal((L, D, D), D ** -0.5 * res),
        "G2": torch.ones(L, D),
        "Wg": normal((L, D, F_), D ** -0.5),
        "Wu": normal((L, D, F_), D ** -0.5),
        "Wd": normal((L, F_, D), F_ ** -0.5 * res),
        "Gf": torch.ones(D),
        "Wout": normal((D, V), D ** -0.5),
    }
    return [torch.nn.Parameter(p[k].cuda()) for k in PARAMS]


def wide(t):
    """t in float32 at least (bfloat16 autocast computes norms and the loss wider)."""
    return t if t.dtype == torch.float64 else t.float()


def rmsnorm(x, g):
    x32 = wide(x)
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * g


def torch_loss(sz, ids, targets, params):
    """transformerLMLoss written with torch ops (PyTorch's own model)."""
    B, N, H, D, L = sz["B"], sz["N"], sz["H"], sz["D"], sz["L"]
    E, G1, Wq, Wk, Wv, Wo, G2, Wg, Wu, Wd, Gf, Wout = params
    x = E[ids]
    for layer in range(L):
        h = rmsnorm(x, G1[layer])

        def heads(t):
            return t.reshape(B, N, H, D // H).transpose(1, 2)

        a = F.scaled_dot_product_attention(heads(h @ Wq[layer]), heads(h @ Wk[layer]), heads(h @ Wv[layer]),
                                           is_causal=True)
        x = x + a.transpose(1, 2).reshape(B, N, D) @ Wo[layer]
        h = rmsnorm(x, G2[layer])
        x = x + (F.silu(h @ Wg[layer]) * (h @ Wu[layer])) @ Wd[layer]
    logits = rmsnorm(x, Gf) @ Wout
    return F.cross_entropy(wide(logits).reshape(B * N, -1), targets.reshape(-1))


def lr_at(step, lr):
    """10 steps of linear warmup, then constant."""
    return lr * min(1.0, (step + 1) / 10)


def train(fn, ps, batches, args):
    """AdamW steps of loss fn(ids, targets, *ps) over batches: (losses, seconds
    per step).  --mode graphs captures the whole step (forward, backward,
    AdamW with capturable state and a tensor learning rate) in one CUDA graph
    and replays it per batch, copied into the graph's input buffers."""
    graphs = args.mode == "graphs"
    lr = torch.tensor(0.0, device="cuda") if graphs else 0.0
    opt = torch.optim.AdamW(ps, lr=lr, betas=(0.9, 0.95), weight_decay=0.0, capturable=graphs)
    losses, times = [], []
    if graphs:
        ids, tg = (b.clone() for b in batches[0])
        # warm up on a side stream with lr 0 (the weights do not move), then
        # reset the optimizer's state in place: the captured step starts fresh
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                fn(ids, tg, *ps).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(side)
        for st in opt.state.values():
            for v in st.values():
                v.zero_()
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss = fn(ids, tg, *ps)
            loss.backward()
            opt.step()
    for step, (bi, bt) in enumerate(batches):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        if graphs:
            ids.copy_(bi)
            tg.copy_(bt)
            lr.fill_(lr_at(step, args.lr))
            graph.replay()
        else:
            for group in opt.param_groups:
                group["lr"] = lr_at(step, args.lr)
            loss = fn(bi, bt, *ps)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=False)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
        if not math.isfinite(losses[-1]):
            print(f"loss {losses[-1]} at step {step}", flush=True)
            break
    return losses, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilesmith", default=os.environ.get("TILESMITH", os.path.join(ROOT, "tilesmith")))
    ap.add_argument("--target", default="triton", choices=["triton", "tilelang"])
    ap.add_argument("--mode", default="graphs", choices=["eager", "compile", "graphs"])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="B=16,N=128,V=256,D=256,H=4,F=704,L=4")
    ap.add_argument("--corpus", nargs="*")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "pytorch"))
    ap.add_argument("--csv")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("train_lm: needs a CUDA GPU")
    sz = parse_size(args.size)
    if sz.get("V") != 256:
        sys.exit("train_lm: the data is bytes: V must be 256")
    path = build(args, sz)
    lm = load(path, "lm")
    t0 = time.time()
    if lm.warm(args.workers, timeout=900) or lm._ts_backward_module().warm(args.workers, timeout=900):
        sys.exit("train_lm: a kernel did not compile")
    print(f"compiled the kernels of both modules with {args.workers} processes in {time.time() - t0:.1f} s",
          flush=True)
    op = lm.register_autograd()
    files = args.corpus or sorted(
        [os.path.join(ROOT, "README.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md")) +
        glob.glob(os.path.join(ROOT, "lean", "*.lean")) + glob.glob(os.path.join(ROOT, "examples", "*.lean")))
    text = corpus(files)
    B, N = sz["B"], sz["N"]
    print(f"corpus: {len(files)} files, {text.numel()} bytes; model {sz}; target {args.target}, mode {args.mode}",
          flush=True)
    gen = torch.Generator().manual_seed(args.seed + 1)
    starts = [torch.randint(0, text.numel() - N - 1, (B,), generator=gen) for _ in range(args.steps)]
    batches = [(torch.stack([text[s:s + N] for s in st]).cuda().contiguous(),
                torch.stack([text[s + 1:s + N + 1] for s in st]).cuda().contiguous()) for st in starts]

    def ts_loss(ids, targets, *ps):
        return op(ids, targets, *[p.to(torch.bfloat16) for p in ps]).float().sum()

    def ts_loss_eager(ids, targets, *ps):
        return lm.apply(ids, targets, *[p.to(torch.bfloat16).contiguous() for p in ps]).float().sum()

    def pt_loss(ids, targets, *ps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return torch_loss(sz, ids, targets, ps)

    if args.mode == "eager":
        ts_fn, pt_fn = ts_loss_eager, pt_loss
    else:
        ts_fn, pt_fn = torch.compile(ts_loss, fullgraph=True), torch.compile(pt_loss, fullgraph=True)

    # the first batch's gradients against float32 autograd of PyTorch's model
    p32 = init_params(sz, args.seed)
    ids, tg = batches[0]
    want = torch.autograd.grad(torch_loss(sz, ids, tg, p32), p32)
    pts = init_params(sz, args.seed)
    got = torch.autograd.grad(ts_loss_eager(ids, tg, *pts), pts)
    worst_grad = 0.0
    print("gradients of the first batch, tilesmith (bf16 kernels) vs float32 PyTorch autograd, relative error:")
    line = []
    for name, g, w in zip(PARAMS, got, want):
        rel = ((g.float() - w).norm() / w.norm().clamp_min(1e-30)).item()
        worst_grad = max(worst_grad, rel)
        line.append(f"{name} {rel:.2e}")
    print("  " + ", ".join(line), flush=True)

    runs = {}
    for label, fn in (("tilesmith", ts_fn), ("pytorch", pt_fn)):
        ps = init_params(sz, args.seed)
        runs[label] = train(fn, ps, batches, args)
        losses = runs[label][0]
        print(f"{label}: {len(losses)} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)

    (lt, tt), (lp, tp) = runs["tilesmith"], runs["pytorch"]
    n = min(len(lt), len(lp))
    print(f"{'step':>5} {'tilesmith':>10} {'pytorch':>10} {'rel diff':>9}")
    worst = 0.0
    for s in range(n):
        rel = abs(lt[s] - lp[s]) / abs(lp[s])
        worst = max(worst, rel)
        if s % 10 == 0 or s == n - 1:
            print(f"{s:5d} {lt[s]:10.4f} {lp[s]:10.4f} {rel:9.2e}")
    # step times without the first few (compiles, CUDA graph recording)
    skip = min(5, max(0, n - 1))
    mt = sum(tt[skip:n]) / max(1, n - skip) * 1e3
    mp_ = sum(tp[skip:n]) / max(1, n - skip) * 1e3
    print(f"largest relative difference of the loss curves over {n} steps: {worst:.2e}; "
          f"worst first-batch gradient error {worst_grad:.2e}")
    print(f"mean step (forward, backward, AdamW) after {skip} steps: tilesmith {mt:.2f} ms, pytorch {mp_:.2f} ms "
          f"(mode {args.mode})")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("step,tilesmith_loss,pytorch_loss,tilesmith_ms,pytorch_ms\n")
            for s in range(n):
                f.write(f"{s},{lt[s]:.6f},{lp[s]:.6f},{tt[s] * 1e3:.3f},{tp[s] * 1e3:.3f}\n")
    mean = sum(abs(lt[s] - lp[s]) / abs(lp[s]) for s in range(n)) / max(1, n)
    print(f"mean relative difference of the loss curves: {mean:.2e}")
    ok = n == args.steps and mean <= 0.01 and worst <= 0.03 and worst_grad <= 0.05
    print("ok: the curves match" if ok else "MISMATCH")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
