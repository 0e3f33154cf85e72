#!/usr/bin/env python3
"""`tilesmith hparams --emit-pytorch`, used from PyTorch on the CPU.

usage: python3 tests/hparams/check_pytorch.py ./tilesmith

1. The emitted module carries exactly what --json says (names, roles,
   multipliers), init_() draws each tensor as the table says (std within
   4% on thousands of elements; gains 1, biases 0) and param_groups() makes
   groups torch.optim.AdamW (and torch.optim.Muon, for hidden matrices
   under --optimizer muon) accept and step with; unknown or missing names
   raise.
2. A coordinate check of the derived rules: the residual MLP of
   examples/mlp_classifier.lean written in PyTorch, initialized and
   optimized with the module of each width (base width 64), BRANCH_MULT on
   each block's update and OUTPUT_MULT on the readout.  After two AdamW
   steps at one learning rate, the change of the last block's
   pre-activation (n @ W[l]) must stay of one size across widths 64..512 under the
   derived parametrization (μP: the update of a hidden matrix scales like
   1/fan_in) and grow with the width under the standard one (every
   multiplier 1), which is what makes a learning rate tuned small fail wide.
Prints one line per check and "N passed, M failed"; exit 1 on a failure.
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

import torch

BIN = sys.argv[1] if len(sys.argv) > 1 else "./tilesmith"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from checks import Checks  # noqa: E402

check = Checks()


def hparams(args, tmp, tag):
    out = os.path.join(tmp, tag + ".py")
    subprocess.run([BIN, "hparams", *args, "--emit-pytorch", out], check=True, cwd=ROOT, capture_output=True)
    js = json.loads(subprocess.run([BIN, "hparams", *args, "--json"], check=True, cwd=ROOT,
                                   capture_output=True, text=True).stdout)
    spec = importlib.util.spec_from_file_location("hp_" + tag, out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, js


def tensors_for(js, gen_shape=None):
    """One tensor per Param (a list of per-block tensors where it is stacked)."""
    named = {}
    for p in js["params"]:
        shape = list(p["shape"])
        if p["depth_dim"] is not None:
            n = shape.pop(p["depth_dim"])
            named[p["name"]] = [torch.empty(shape, requires_grad=True) for _ in range(n)]
        else:
            named[p["name"]] = torch.empty(shape, requires_grad=True)
    return named


def module_checks(tmp):
    mod, js = hparams(["tests/hparams/models.lean", "--entry", "mlp_lm", "--width", "D=16", "--depth", "L=1",
                       "--size", "D=256"], tmp, "mlp_lm")
    same = set(mod.PARAMS) == {p["name"] for p in js["params"]} and all(
        mod.PARAMS[p["name"]][k] == p[k] for p in js["params"]
        for k in ("role", "depth_branch", "optimizer", "init_std", "init_value", "lr_mult", "output_mult",
                  "wd_mult", "eps_mult", "reason"))
    check(same, "the module's PARAMS are --json's params (mlp_lm, held out)")
    check(mod.BRANCH_MULT == js["branch_mult"] and abs(mod.BRANCH_MULT - 1 / 3) < 1e-12,
          "BRANCH_MULT = (L/L_base)^-1 = 1/3 under CompleteP")
    named = tensors_for(js)
    g = torch.Generator().manual_seed(0)
    mod.init_(named, generator=g)
    for p in js["params"]:
        ts = named[p["name"]] if isinstance(named[p["name"]], list) else [named[p["name"]]]
        flat = torch.cat([t.detach().flatten() for t in ts])
        if p["init_std"] > 0:
            std = flat.std().item()
            check(abs(std / p["init_std"] - 1) < 0.04 and abs(flat.mean().item()) < 4 * p["init_std"] / math.sqrt(flat.numel()),
                  "init_: %s (%s) std %.4g, table %.4g" % (p["name"], p["role"], std, p["init_std"]))
        else:
            check(bool((flat == p["init_value"]).all()), "init_: %s (%s) all %g" % (p["name"], p["role"], p["init_value"]))
    adamw, muon = mod.param_groups(named, lr=1e-3, weight_decay=0.1, eps=1e-8)
    by = {grp["name"]: grp for grp in adamw}
    check(not muon and set(by) == set(mod.PARAMS), "param_groups: every Param in an AdamW group, none on Muon")
    check(all(abs(by[n]["lr"] - 1e-3 * s["lr_mult"]) < 1e-15 and abs(by[n]["weight_decay"] - 0.1 * s["wd_mult"]) < 1e-15
              and abs(by[n]["eps"] - 1e-8 * s["eps_mult"]) < 1e-20 for n, s in mod.PARAMS.items()),
          "param_groups: lr, weight_decay and eps are the base values times the table's multipliers")
    opt = torch.optim.AdamW(adamw)
    loss = sum((t * t).sum() for v in named.values() for t in (v if isinstance(v, list) else [v]))
    loss.backward()
    opt.step()
    check(True, "torch.optim.AdamW takes the groups and steps")
    for bad, what in (({**named, "nope": named["E"]}, "an unknown name"), ({k: v for k, v in named.items() if k != "U"}, "a missing Param")):
        try:
            mod.param_groups(bad, lr=1e-3)
            check(False, "param_groups refuses %s" % what)
        except KeyError:
            check(True, "param_groups refuses %s" % what)
    # Muon for the hidden matrices of the transformer LM
    mod, js = hparams(["examples/transformer_lm.lean", "--entry", "lm_small", "--width", "D=128,F=352", "--depth", "L=2",
                       "--optimizer", "muon"], tmp, "lm_small")
    named = tensors_for(js)
    mod.init_(named, generator=torch.Generator().manual_seed(1))
    adamw, muon = mod.param_groups(named, lr=0.02, weight_decay=0.0)
    hidden = {p["name"] for p in js["params"] if p["role"] == "hidden"}
    check({grp["name"] for grp in muon} == hidden and hidden == {"Wq", "Wk", "Wv", "Wo", "Wg", "Wu", "Wd"},
          "lm_small --optimizer muon: the hidden matrices (Wq Wk Wv Wo Wg Wu Wd) are Muon's, the rest AdamW's")
    mopt = torch.optim.Muon(muon)
    aopt = torch.optim.AdamW(adamw)
    loss = sum((t * t).sum() for v in named.values() for t in (v if isinstance(v, list) else [v]))
    loss.backward()
    mopt.step()
    aopt.step()
    check(True, "torch.optim.Muon and AdamW take the groups and step")


def coord_check(tmp):
    """Δ of the last hidden activations after AdamW steps, per width."""
    widths = [64, 128, 256, 512]
    I, C, L, B, steps, lr = 64, 10, 2, 128, 2, 1e-3
    x = torch.randn(B, I, generator=torch.Generator().manual_seed(2))
    y = torch.randint(0, C, (B,), generator=torch.Generator().manual_seed(3))
    res = {"derived": [], "standard": []}
    for D in widths:
        mod, js = hparams(["examples/mlp_classifier.lean", "--entry", "residualMlpLoss", "--width", "D=64", "--depth",
                           "L=2", "--size", "B=%d,I=%d,C=%d,L=%d,D=%d" % (B, I, C, L, D)], tmp, "mlp_%d" % D)
        for kind in res:
            torch.manual_seed(4)
            named = tensors_for(js)
            mod.init_(named, generator=torch.Generator().manual_seed(5))
            if kind == "derived":
                groups, _ = mod.param_groups(named, lr=lr)
                branch, out_mult = mod.BRANCH_MULT, mod.OUTPUT_MULT.get("Wout", 1.0)
            else:
                groups = [dict(params=v if isinstance(v, list) else [v]) for v in named.values()]
                branch, out_mult = 1.0, 1.0
                with torch.no_grad():  # standard parametrization: the readout at 1/sqrt(fan_in)
                    named["Wout"].normal_(0, 1 / math.sqrt(D))
            opt = torch.optim.AdamW(groups, lr=lr, weight_decay=0.0)

            def forward():
                """(the last block's pre-activation n @ W[L-1], the logits)"""
                h = torch.relu(x @ named["Win"])
                for l in range(L):
                    n = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * named["G"][l]
                    z = n @ named["W"][l]
                    h = h + branch * torch.relu(z)
                return z, out_mult * (h @ named["Wout"])

            z0 = forward()[0].detach()
            for _ in range(steps):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(forward()[1], y).backward()
                opt.step()
            dh = (forward()[0].detach() - z0).pow(2).mean().sqrt().item()
            res[kind].append(dh)
    print("  width:            " + " ".join("%9d" % w for w in widths))
    for kind, v in res.items():
        print("  RMS Δz %-9s " % kind + " ".join("%9.3g" % d for d in v))
    rd = res["derived"][-1] / res["derived"][0]
    rs = res["standard"][-1] / res["standard"][0]
    check(0.5 < rd < 2.0, "coordinate check: derived parametrization, Δz at width 512 / at 64 = %.2f (stays of one size)" % rd)
    check(rs > 4.0, "coordinate check: standard parametrization, Δz at width 512 / at 64 = %.2f (grows with the width)" % rs)


with tempfile.TemporaryDirectory() as tmp:
    module_checks(tmp)
    coord_check(tmp)
sys.exit(check.finish())
