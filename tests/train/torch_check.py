#!/usr/bin/env python3
"""`tilesmith train` against the same training written in PyTorch (float64, CPU).

usage: python3 tests/train/torch_check.py ./tilesmith

The residual MLP of examples/mlp_classifier.lean (residualMlpLoss) at small
sizes, full-batch (the data has as many rows as the batch, so every step
sees every row), from the same initial Params (written here, read with
--init): five steps of each optimizer under the standard parametrization
and under the derived one (the multipliers, the readout's output multiplier
and the residual branch multiplier from `tilesmith hparams --emit-pytorch`),
with weight decay, a warmup + cosine schedule and gradient clipping.  The
trained Params (--save) must equal PyTorch's: torch.optim.SGD, AdamW and,
for Muon, torch.optim.Muon's algorithm in float64 (torch's own runs its
Newton-Schulz steps in bfloat16: compared loosely); Lion as its paper
defines it.  Also: the loss goes down over 60 steps on a learnable task,
and two runs with one seed are identical.
Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import importlib.util
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else "./tilesmith"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B, I, D, L, C = 32, 16, 32, 2, 5
SIZES = "B=%d,I=%d,D=%d,L=%d,C=%d" % (B, I, D, L, C)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checks import Checks  # noqa: E402

check = Checks()
torch.set_default_dtype(torch.float64)


def run(args):
    r = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
    return r


def sched(t, steps, warmup):
    if t < warmup:
        return (t + 1) / warmup
    x = (t - warmup) / (steps - warmup)
    return 0.5 * (1 + math.cos(math.pi * x))


def ns(G, steps=5, eps=1e-7):
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G.clone()
    tr = X.size(0) > X.size(1)
    if tr:
        X = X.T
    X = X / (X.norm() + eps)
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if tr else X


def reference(init, x, y, opt, spec, steps, lr, adamw_lr, wd, warmup, clip):
    """PyTorch float64 training; spec: per Param dict of multipliers and forward scales."""
    P = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    X, Y = torch.tensor(x), torch.tensor(y)

    def loss_fn():
        h = torch.relu(X @ (P["Win"] * spec["Win"]["scale"]))
        for l in range(L):
            n = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * P["G"][l]
            h = h + torch.relu(n @ (P["W"][l] * spec["W"]["scale"]))
        return torch.nn.functional.cross_entropy(h @ (P["Wout"] * spec["Wout"]["scale"]), Y)

    state = {k: dict(m=torch.zeros_like(v), v=torch.zeros_like(v)) for k, v in P.items()}
    for t in range(steps):
        for v in P.values():
            v.grad = None
        loss = loss_fn()
        loss.backward()
        gn = math.sqrt(sum(float((v.grad * v.grad).sum()) for v in P.values()))
        cf = clip / gn if clip and gn > clip else 1.0
        f = sched(t, steps, warmup)
        with torch.no_grad():
            for k, p in P.items():
                g = p.grad * cf
                s = spec[k]
                st = state[k]
                muon = opt == "muon" and s["muon"]
                kind = "adamw" if opt == "muon" and not muon else opt
                plr = (adamw_lr if opt == "muon" and not muon else lr) * f * s["lr_mult"]
                pwd = wd * s["wd_mult"]
                if kind == "sgd":
                    gi = g + pwd * p
                    st["m"].mul_(0.9).add_(gi)
                    p.sub_(plr * st["m"])
                elif kind == "adamw":
                    b1, b2, eps = 0.9, 0.999, 1e-8 * s["eps_mult"]
                    p.mul_(1 - plr * pwd)
                    st["m"].mul_(b1).add_((1 - b1) * g)
                    st["v"].mul_(b2).add_((1 - b2) * g * g)
                    mh, vh = st["m"] / (1 - b1 ** (t + 1)), st["v"] / (1 - b2 ** (t + 1))
                    p.sub_(plr * mh / (vh.sqrt() + eps))
                elif kind == "lion":
                    b1, b2 = 0.9, 0.99
                    cvec = b1 * st["m"] + (1 - b1) * g
                    p.mul_(1 - plr * pwd)
                    p.sub_(plr * torch.sign(cvec))
                    st["m"].mul_(b2).add_((1 - b2) * g)
                else:  # muon, torch.optim.Muon's algorithm in float64, per matrix [in, out]
                    aspect = math.sqrt(max(1, s["fan_out"] / s["fan_in"]))
                    st["m"].lerp_(g, 1 - 0.95)
                    upd = g.lerp(st["m"], 0.95)
                    O = torch.stack([ns(upd[l]) for l in range(upd.shape[0])]) if upd.dim() == 3 else ns(upd)
                    p.mul_(1 - plr / aspect * pwd)
                    p.sub_(plr * O)
    return {k: v.detach().numpy() for k, v in P.items()}


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, I))
    y = (x @ rng.standard_normal((I, C))).argmax(1).astype(np.int64)
    init = {"Win": rng.standard_normal((I, D)) / math.sqrt(I), "G": 1 + 0.1 * rng.standard_normal((L, D)),
            "W": rng.standard_normal((L, D, D)) / math.sqrt(D), "Wout": rng.standard_normal((D, C)) / math.sqrt(D)}
    with tempfile.TemporaryDirectory() as tmp:
        np.save(os.path.join(tmp, "x.npy"), x)
        np.save(os.path.join(tmp, "y.npy"), y)
        os.makedirs(os.path.join(tmp, "init"))
        for k, v in init.items():
            np.save(os.path.join(tmp, "init", k + ".npy"), v)
        mods = {}
        for o in ("adamw", "muon"):
            hp = os.path.join(tmp, "hp_%s.py" % o)
            run(["hparams", "examples/mlp_classifier.lean", "--entry", "residualMlpLoss", "--size", SIZES,
                 "--width", "D=8", "--depth", "L=1", "--optimizer", o, "--emit-pytorch", hp])
            mods[o] = load_module(hp, "hp_" + o)
        roles = {k: v["role"] for k, v in mods["adamw"].PARAMS.items()}
        fans = {"Win": (I, D), "G": (1, 1), "W": (D, D), "Wout": (D, C)}

        def spec_for(derived, muon):
            out = {}
            mod = mods["muon" if muon else "adamw"]
            for k in init:
                s = mod.PARAMS[k]
                hidden = roles[k] == "hidden"
                out[k] = dict(lr_mult=s["lr_mult"] if derived else (math.sqrt(max(1, fans[k][1] / fans[k][0])) if muon and hidden else 1.0),
                              wd_mult=s["wd_mult"] if derived else (0.0 if roles[k] == "vector" else 1.0),
                              eps_mult=s["eps_mult"] if derived else 1.0, muon=hidden,
                              fan_in=fans[k][0], fan_out=fans[k][1],
                              scale=(s["output_mult"] * (mod.BRANCH_MULT if k == "W" else 1.0)) if derived else 1.0)
            return out

        steps, warmup, wd, clip = 5, 2, 0.01, 1.0
        cases = [("sgd", False, 0.05), ("adamw", False, 3e-3), ("lion", False, 1e-3),
                 ("sgd", True, 0.05), ("adamw", True, 3e-3), ("lion", True, 1e-3), ("muon", True, 0.02), ("muon", False, 0.02)]
        for opt, derived, lr in cases:
            save = os.path.join(tmp, "out_%s_%d" % (opt, derived))
            args = ["train", "examples/mlp_classifier.lean", "--entry", "residualMlpLoss", "--size", SIZES,
                    "--data", "x=" + os.path.join(tmp, "x.npy"), "--data", "labels=" + os.path.join(tmp, "y.npy"),
                    "--steps", str(steps), "--lr", str(lr), "--adamw-lr", "3e-3", "--optimizer", opt, "--wd", str(wd),
                    "--lr-schedule", "cosine", "--warmup", str(warmup), "--clip", str(clip),
                    "--init", os.path.join(tmp, "init"), "--save", save, "--exec", "f64"]
            if derived:
                args += ["--param", "derived", "--width", "D=8", "--depth", "L=1"]
            elif opt == "muon":
                args += ["--width", "D"]
            r = run(args)
            if r.returncode:
                check(False, "train %s (%s) ran" % (opt, "derived" if derived else "standard"))
                continue
            got = {k: np.load(os.path.join(save, k + ".npy")).reshape(v.shape) for k, v in init.items()}
            ref = reference(init, x, y, opt, spec_for(derived, opt == "muon"), steps, lr, 3e-3, wd, warmup, clip)
            err = max(float(np.abs(got[k] - ref[k]).max() / (np.abs(ref[k] - init[k]).max() + 1e-300)) for k in init)
            check(err < 1e-6, "train %-5s %-8s 5 steps = PyTorch float64 (largest difference %.1e of the update)"
                  % (opt, "derived" if derived else "standard", err))
            if opt == "muon" and derived:
                # torch.optim.Muon itself, one step from one gradient: its Newton-Schulz runs in bf16
                g = torch.randn(D, D, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
                p = torch.nn.Parameter(torch.tensor(init["W"][0]).T.clone())
                p.grad = g.T.clone()
                torch.optim.Muon([p], lr=0.02, weight_decay=0.0).step()
                ours = torch.tensor(init["W"][0]) - 0.02 * ns(g.lerp(torch.zeros_like(g).lerp(g, 0.05), 0.95))
                d = float((p.detach().T - ours).abs().max() / (0.02 * ns(g).abs().max()))
                check(d < 0.05, "one Muon step = torch.optim.Muon's (bf16 Newton-Schulz) within %.3f of the update" % d)
        # the float32 executor (train's default) with its float32 Params and
        # optimizer state: the same runs within float32's rounding
        for opt, lr in [("adamw", 3e-3), ("sgd", 0.05), ("lion", 1e-3), ("muon", 0.02)]:
            save = os.path.join(tmp, "out_f32_" + opt)
            r = run(["train", "examples/mlp_classifier.lean", "--entry", "residualMlpLoss", "--size", SIZES,
                     "--data", "x=" + os.path.join(tmp, "x.npy"), "--data", "labels=" + os.path.join(tmp, "y.npy"),
                     "--steps", str(steps), "--lr", str(lr), "--adamw-lr", "3e-3", "--optimizer", opt, "--wd", str(wd),
                     "--lr-schedule", "cosine", "--warmup", str(warmup), "--clip", str(clip),
                     "--init", os.path.join(tmp, "init"), "--save", save] + (["--width", "D"] if opt == "muon" else []))
            if r.returncode:
                check(False, "train %s in float32 ran" % opt)
                continue
            got = {k: np.load(os.path.join(save, k + ".npy")).reshape(v.shape) for k, v in init.items()}
            ref = reference(init, x, y, opt, spec_for(False, opt == "muon"), steps, lr, 3e-3, wd, warmup, clip)
            err = max(float(np.abs(got[k] - ref[k]).max() / (np.abs(ref[k] - init[k]).max() + 1e-300)) for k in init)
            check(err < 1e-3, "train %-5s in float32 (--exec f32, the default) 5 steps = PyTorch float64 "
                  "(largest difference %.1e of the update)" % (opt, err))
        # learning, and determinism
        xs = rng.standard_normal((256, I))
        ys = (xs @ rng.standard_normal((I, C))).argmax(1).astype(np.int64)
        np.save(os.path.join(tmp, "xs.npy"), xs)
        np.save(os.path.join(tmp, "ys.npy"), ys)
        outs = []
        for rep in range(2):
            csv = os.path.join(tmp, "run%d.csv" % rep)
            r = run(["train", "examples/mlp_classifier.lean", "--entry", "residualMlpLoss", "--size", SIZES,
                     "--data", "x=" + os.path.join(tmp, "xs.npy"), "--data", "labels=" + os.path.join(tmp, "ys.npy"),
                     "--steps", "60", "--lr", "3e-3", "--seed", "7", "--log-every", "20", "--csv", csv])
            rows = [l.split(",") for l in open(csv).read().split("\n")[1:] if l]
            outs.append([(int(r_[0]), float(r_[1])) for r_ in rows])
        first, last = outs[0][0][1], outs[0][-1][1]
        check(last < 0.5 * first, "60 AdamW steps on a learnable task: loss %.3f -> %.3f" % (first, last))
        check(outs[0] == outs[1], "two runs with --seed 7 log identical losses")
    sys.exit(check.finish())


main()
