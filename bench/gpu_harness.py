"""GPU harness: check and time tilesmith's emitted kernels against PyTorch.

Run on a machine with an NVIDIA GPU and PyTorch (and Triton; TileLang for the
TileLang modules), after bench/prepare.sh has written the modules:

    python3 bench/gpu_harness.py bench/out [--only NAME,...] [--json OUT.json]
    python3 bench/gpu_harness.py --self-test ./tilesmith   (CPU: the peers' code
                                                             agrees with the graphs)

For every case of bench/out/manifest.json, in one process:

1. fresh random inputs in the storage type (bf16 by default), integers in
   the valid range for Index inputs;
2. the float32 reference: the case's textbook PyTorch code (below; for cases
   without one, a PyTorch evaluation of tilesmith's graph JSON) on float32
   copies of the same inputs;
3. each emitted module (TileLang, Triton): its output buffer is poisoned with
   NaN first (the module's run(out=...) when it takes one; otherwise the
   caching allocator is filled with NaN just before the call), then compared
   with the reference by the normwise relative error ||out - ref|| / ||ref||;
4. timing of every contender with CUDA events (triton.testing.do_bench, median
   of many runs after warm-up): PyTorch eager (the same textbook code, in the
   storage type), torch.compile of it, the library kernel where one exists
   (SDPA, cuBLAS), and the emitted modules.

It prints one table and writes every number to a JSON file.
"""

import argparse
import importlib.util
import inspect
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TOL = {"bf16": 3e-2, "f16": 5e-3, "f32": 1e-4}


# ---------------------------------------------------------------------------
# textbook PyTorch for the benchmark cases: what a user would otherwise run.
# Each takes the entry's tensors in declaration order.

def rms(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def attention(q, k, v):
    return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ v


def causal_attention(q, k, v):
    n = q.shape[-2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    return torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) @ v


def softcap_window_attention(q, k, v, window=1024, cap=50.0):
    n = q.shape[-2]
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = cap * torch.tanh(s / cap)
    i = torch.arange(n, device=q.device)[:, None]
    j = torch.arange(n, device=q.device)[None, :]
    s = s.masked_fill(~((j <= i) & (i < j + window)), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def gqa_decode(q, k, v):
    h, hkv = q.shape[1], k.shape[1]
    k = k.repeat_interleave(h // hkv, dim=1)
    v = v.repeat_interleave(h // hkv, dim=1)
    s = q[:, :, None, :] @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return (torch.softmax(s, dim=-1) @ v)[:, :, 0, :]


def cross_entropy(logits, targets):
    return F.cross_entropy(logits.float(), targets).reshape(1, 1)


TEXTBOOK = {
    "attention": attention,
    "causalAttention": causal_attention,
    "softcapWindowAttention": softcap_window_attention,
    "gqaDecode": gqa_decode,
    "rmsnormMatmul": lambda x, g, w: rms(x, g) @ w,
    "swigluMlp": lambda x, wg, wu, wd: (F.silu(x @ wg) * (x @ wu)) @ wd,
    "gatedMlp": lambda x, wg, wu: F.silu(x @ wg) * (x @ wu),
    "matmulLargeK": lambda a, b: a @ b,
    "rowSoftmax": lambda x: torch.softmax(x, dim=-1),
    "rowRmsnorm": rms,
    "rowLayernorm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5),
    "biasGeluResidual": lambda x, b, r: r + F.gelu(x + b),
    "linearCrossEntropy": lambda h, w, t: cross_entropy(h @ w, t),
}

# the best library kernel, where one exists
LIBRARY = {
    "attention": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(q, k, v)),
    "causalAttention": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "gqaDecode": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(
        q[:, :, None, :], k, v, enable_gqa=True)[:, :, 0, :]),
    "matmulLargeK": ("cuBLAS", lambda a, b: torch.matmul(a, b)),
    "rmsnormMatmul": ("matmul alone", lambda x, g, w: torch.matmul(x, w)),
}


# ---------------------------------------------------------------------------
# a PyTorch evaluation of tilesmith's graph JSON (for cases with no textbook
# code, e.g. the whole models)

UNARY = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "tanh": torch.tanh, "erf": torch.erf, "sigmoid": torch.sigmoid,
         "relu": torch.relu, "abs": torch.abs}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
          "max": torch.maximum, "min": torch.minimum, "lt": torch.lt, "le": torch.le,
          "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne}
REDUCE = {"sum": lambda x, a: x.sum(a, keepdim=True), "amax": lambda x, a: x.amax(a, keepdim=True),
          "amin": lambda x, a: x.amin(a, keepdim=True)}


def graph_fn(graph):
    nodes = graph["nodes"]

    def const(v):
        return float(v)  # numbers, or the strings "inf", "-inf", "nan"

    def fn(*args):
        val = {}
        for n in nodes:
            op, ins = n["op"], [val[i] for i in n["in"]]
            if op == "input":
                r = args[[x["node"] for x in graph["inputs"]].index(n["id"])]
            elif op == "const":
                r = const(n["value"])
                if n["kind"] == "int":
                    r = int(r)
            elif op == "iota":
                r = torch.arange(n["shape"][0], device=args[0].device)
            elif op == "cast":
                r = ins[0].to(args_dtype[0])
            elif op in UNARY:
                r = UNARY[op](ins[0])
            elif op in BINARY:
                a, b = ins
                if not torch.is_tensor(a):
                    a = torch.tensor(a, device=args[0].device, dtype=b.dtype if torch.is_tensor(b) and b.is_floating_point() else None)
                r = BINARY[op](a, b)
            elif op == "select":
                c, a, b = ins
                r = torch.where(c, a, b)
            elif op in REDUCE:
                r = REDUCE[op](ins[0], n["axis"])
            elif op == "matmul":
                r = ins[0] @ ins[1]
            elif op == "permute":
                r = ins[0].permute(*n["perm"])
            elif op == "reshape":
                r = ins[0].reshape(n["shape"])
            elif op == "slice":
                r = ins[0].narrow(n["axis"], n["lo"], n["hi"] - n["lo"])
            elif op == "concat":
                r = torch.cat(ins, dim=n["axis"])
            elif op == "gather":
                x, idx = ins
                ax = n["axis"]
                shape = list(torch.broadcast_shapes(
                    tuple(1 if d == ax else s for d, s in enumerate(x.shape)),
                    tuple(1 if d == ax else s for d, s in enumerate(idx.shape))))
                xs, ids = list(shape), list(shape)
                xs[ax], ids[ax] = x.shape[ax], idx.shape[ax]
                r = torch.gather(x.expand(xs), ax, idx.expand(ids))
            else:
                raise ValueError("unknown op " + op)
            val[n["id"]] = r
        return val[graph["output"]]

    args_dtype = [torch.float32]

    def typed(*args):
        floats = [a for a in args if a.is_floating_point()]
        args_dtype[0] = floats[0].dtype if floats else torch.float32
        return fn(*args)

    return typed


# ---------------------------------------------------------------------------

def load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def make_inputs(graph, dtype, gen=None, device="cuda", unit_weights=False):
    """Fresh random inputs, drawn as tilesmith draws them (ir/inputs.c; the
    graph JSON carries each input's rule): normal(0, 1) for real inputs,
    normal(0, 1/fan_in) for weights feeding a matmul (normal(0, 1) with
    unit_weights), uniform over [0, bound) for Index inputs."""
    out = []
    nodes = {n["id"]: n for n in graph["nodes"]}
    for inp in graph["inputs"]:
        shape = nodes[inp["node"]]["shape"]
        if nodes[inp["node"]]["kind"] != "real" and "bound" not in inp:
            raise ValueError("input %s: no index bound in the graph JSON (made by an older tilesmith?)" % inp["name"])
        if "bound" in inp:
            out.append(torch.randint(0, inp["bound"], shape, device=device, generator=gen, dtype=torch.int64))
        else:
            x = torch.randn(shape, device=device, generator=gen, dtype=torch.float32 if dtype != torch.float64 else dtype)
            out.append((x * (1 if unit_weights else inp.get("fan_in", 1)) ** -0.5).to(dtype))
    return out


def rel_err(out, ref):
    out, ref = out.float(), ref.float()
    if out.shape != ref.shape:
        return float("inf"), "shape %s != %s" % (tuple(out.shape), tuple(ref.shape))
    if not torch.isfinite(out).all():
        bad = (~torch.isfinite(out)).sum().item()
        return float("inf"), "%d non-finite elements (unwritten or overflow)" % bad
    num = torch.linalg.vector_norm((out - ref).double()).item()
    den = torch.linalg.vector_norm(ref.double()).item()
    return num / max(den, 1e-300), ""


def poison_allocator(nbytes):
    """Fill the caching allocator's free memory with NaN bytes."""
    t = torch.full((max(nbytes // 4, 1) + 1024,), float("nan"), device="cuda")
    del t


def bench(fn, budget_ms=600):
    import triton.testing
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    once = (time.perf_counter() - t0) * 1e3
    rep = max(min(budget_ms, once * 50), once * 3, 20)
    return triton.testing.do_bench(fn, warmup=max(min(once * 5, 200), 5), rep=rep, return_mode="median")


def case_inputs(case, seed):
    """(graph, fresh inputs in the storage type, the case's textbook PyTorch or
    None, the eager function: the textbook or the graph in PyTorch)."""
    graph = json.load(open(case["graph"]))
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    inputs = make_inputs(graph, DTYPES[case.get("dtype", "bf16")], gen)
    textbook = TEXTBOOK.get(case["generic"])
    return graph, inputs, textbook, textbook if textbook else graph_fn(graph)


def run_case(case, args, rows):
    dtype = DTYPES[case.get("dtype", "bf16")]
    graph, inputs, textbook, eager = case_inputs(case, args.seed)
    inputs32 = [x.float() if x.is_floating_point() else x for x in inputs]
    gname = case["generic"]
    row = {"case": case["name"], "entry": case["entry"], "file": case["file"], "results": {}}
    rows.append(row)
    with torch.no_grad():
        ref = eager(*inputs32)
        torch.cuda.synchronize()
        row["reference"] = "textbook PyTorch" if textbook else "graph JSON in PyTorch"
        if textbook and args.check_graph:
            g_ref = graph_fn(graph)(*inputs32)
            row["graph_vs_textbook"] = rel_err(g_ref, ref)[0]
        # PyTorch itself in the storage type: how far rounding alone moves this
        # case's result (a floor for the emitted kernels; not judged)
        try:
            row["results"]["eager"] = {"rel_err": rel_err(eager(*inputs), ref)[0]}
        except Exception as e:
            row["results"]["eager"] = {"error": "%s: %s" % (type(e).__name__, e)}
        contenders = [("eager", lambda: eager(*inputs))]
        compiled = torch.compile(eager, dynamic=False)
        contenders.append(("torch.compile", lambda: compiled(*inputs)))
        if gname in LIBRARY:
            lname, lfn = LIBRARY[gname]
            contenders.append((lname, lambda: lfn(*inputs)))
        for target, path in case["modules"].items():
            try:
                mod = load_module(path)
            except Exception as e:  # a target missing on this machine
                row["results"][target] = {"error": "import: %s" % e}
                continue
            # a keyword-only out=, not an input the Lean source happens to call `out`
            params = inspect.signature(mod.run).parameters
            takes_out = "out" in params and params["out"].kind == inspect.Parameter.KEYWORD_ONLY
            out_bytes = ref.numel() * 4
            try:
                if takes_out:
                    buf = torch.full(tuple(ref.shape), float("nan"), device="cuda", dtype=dtype)
                    got = mod.run(*inputs, out=buf)
                else:
                    poison_allocator(out_bytes * 4)
                    got = mod.run(*inputs)
                torch.cuda.synchronize()
                err, why = rel_err(got, ref)
                ok = err <= TOL[case.get("dtype", "bf16")]
                row["results"][target] = {"rel_err": err, "ok": ok, "why": why,
                                          "poison": "out=" if takes_out else "allocator"}
                contenders.append((target, lambda m=mod: m.run(*inputs)))
            except Exception as e:
                row["results"][target] = {"error": "%s: %s" % (type(e).__name__, e),
                                          "trace": traceback.format_exc()[-2000:]}
        for name, fn in contenders:
            try:
                ms = bench(fn, args.budget_ms)
                row["results"].setdefault(name, {})["ms"] = ms
            except Exception as e:
                row["results"].setdefault(name, {})["error"] = "%s: %s" % (type(e).__name__, e)
    return row


# ---------------------------------------------------------------------------
# compile ahead, in parallel: TileLang kernels (nvcc), Triton kernels and
# torch.compile of every case, each in a worker process, so the measuring
# process below finds every kernel in the on-disk caches (TileLang's
# TILELANG_CACHE_DIR, Triton's ~/.triton/cache, Inductor's FX graph cache)
# and its wall time goes to checking and timing.  Nothing is measured here.

def _warm(kind, where, name, work):
    """(kind, where, name, seconds, error or "") of work(); a failure is
    reported again by the measuring run."""
    t0 = time.time()
    try:
        work()
        err = ""
    except Exception as e:
        err = "%s: %s" % (type(e).__name__, str(e)[-300:])
    return (kind, where, name, time.time() - t0, err)


def _warm_tilelang(path, name):
    return _warm("tilelang", path, name, lambda: load_module(path).compiled_kernel(name))


TRITON_DTYPES = {"*bf16": torch.bfloat16, "*fp16": torch.float16, "*fp32": torch.float32,
                 "*i64": torch.int64, "*i32": torch.int32, "*i1": torch.bool}


def _warm_triton(path, idx):
    def work():
        kernel, sig, grid, warps = load_module(path).TRITON_KERNELS[idx]
        kernel.warmup(*[TRITON_DTYPES[t] for t in sig.values()], grid=grid, num_warps=warps)
    return _warm("triton", path, "kernel %d" % idx, work)


def _warm_compile(case, seed):
    def work():
        _, inputs, _, eager = case_inputs(case, seed)
        with torch.no_grad():
            torch.compile(eager, dynamic=False)(*inputs)
        torch.cuda.synchronize()
    return _warm("torch.compile", case["name"], "", work)


def prewarm(cases, workers, seed):
    """Fill the compile caches for `cases` with `workers` CPU processes (plus
    a few GPU processes for torch.compile); prints a line per failure."""
    import concurrent.futures as cf
    import multiprocessing as mp
    import re
    ctx = mp.get_context("spawn")
    t0 = time.time()
    jobs = []
    for case in cases:
        for target, path in case["modules"].items():
            src = open(path).read()
            if target == "tilelang":
                jobs += [(_warm_tilelang, path, n) for n in re.findall(r"^def (k\d+_\w+)\(", src, re.M)]
            elif target == "triton":
                n = len(re.findall(r"^@triton.jit", src, re.M))
                jobs += [(_warm_triton, path, i) for i in range(n)]
    gpu_workers = min(4, max(1, workers // 4))
    done = {"tilelang": 0, "triton": 0, "torch.compile": 0}
    slow = []
    with cf.ProcessPoolExecutor(max(1, workers - gpu_workers), mp_context=ctx) as cpu, \
            cf.ProcessPoolExecutor(gpu_workers, mp_context=ctx) as gpu:
        futs = [gpu.submit(_warm_compile, c, seed) for c in cases]
        futs += [cpu.submit(f, a, b) for f, a, b in jobs]
        for fut in cf.as_completed(futs):
            kind, where, name, secs, err = fut.result()
            done[kind] += 1
            slow.append((secs, kind, os.path.basename(where), name))
            if err:
                print("prewarm: %s %s %s failed after %.1fs: %s" % (kind, os.path.basename(where), name, secs, err),
                      flush=True)
    slow.sort(reverse=True)
    print("prewarm: %s in %.1fs; slowest: %s" % (
        ", ".join("%d %s" % (v, k) for k, v in done.items()), time.time() - t0,
        "; ".join("%s %s %s %.1fs" % (k, w, n, s) for s, k, w, n in slow[:4])), flush=True)


def save_json(path, meta, rows):
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


def print_table(rows):
    cols = ["eager", "torch.compile", "library", "tilelang", "triton"]
    print("\n| case | eager ms (rel err) | torch.compile ms | library ms | TileLang ms (rel err) | Triton ms (rel err) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        res = r["results"]
        lib = [k for k in res if k not in ("eager", "torch.compile", "tilelang", "triton")]

        def cell(k):
            if k not in res:
                return "–"
            x = res[k]
            if "error" in x:
                return "error"
            s = "%.3f" % x["ms"] if "ms" in x else "–"
            if "rel_err" in x:
                s += " (%.1e%s)" % (x["rel_err"], "" if x.get("ok", True) else " FAIL")
            return s
        libcell = ("%s %s" % (lib[0], cell(lib[0]))) if lib else "–"
        print("| %s | %s | %s | %s | %s | %s |" % (r["case"], cell("eager"), cell("torch.compile"),
                                                   libcell, cell("tilelang"), cell("triton")))
    del cols


# small instances for --self-test: (file, generic, sizes, textbook keyword args)
SELF_TEST = [
    ("examples/attention.lean", "attention", "B=2,H=2,N=8,D=4", {}),
    ("examples/causal_attention.lean", "causalAttention", "B=2,H=2,N=8,D=4", {}),
    ("examples/softcap_window_attention.lean", "softcapWindowAttention", "B=1,H=2,N=16,D=4,W=5", {"window": 5}),
    ("examples/gqa_decode.lean", "gqaDecode", "B=2,H=4,Hkv=2,S=8,D=4", {}),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", "M=4,K=8,N=6", {}),
    ("examples/swiglu_mlp.lean", "swigluMlp", "M=4,D=8,F=12", {}),
    ("examples/swiglu_mlp.lean", "gatedMlp", "M=4,D=8,F=12", {}),
    ("examples/matmul_large_k.lean", "matmulLargeK", "M=4,K=64,N=4", {}),
    ("examples/softmax.lean", "rowSoftmax", "M=4,N=16", {}),
    ("examples/rmsnorm.lean", "rowRmsnorm", "M=4,N=16", {}),
    ("examples/layernorm.lean", "rowLayernorm", "M=4,N=16", {}),
    ("examples/bias_gelu_residual.lean", "biasGeluResidual", "M=4,N=16", {}),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=6,D=8,V=10", {}),
]


def self_test(tool):
    """On the CPU: the harness's textbook PyTorch and its library kernels agree
    with tilesmith's graph (evaluated in PyTorch) on small instances, so the
    GPU run checks the emitted kernels against the right functions; and the
    inputs it makes are what each emitted run() takes (run() refuses them
    only for being on the CPU: its device check comes after all others)."""
    import subprocess
    import tempfile
    passed = failed = 0
    torch.manual_seed(0)
    tmp = tempfile.TemporaryDirectory(prefix="harness-selftest-")
    for path, name, sizes, kw in SELF_TEST:
        g = json.loads(subprocess.run([tool, "graph", path, "--entry", name, "--size", sizes, "--format", "json"],
                                      check=True, capture_output=True, text=True).stdout)
        args = make_inputs(g, torch.float64, device="cpu")
        want = graph_fn(g)(*args).double()
        checks = [("textbook", TEXTBOOK[name](*args, **kw))]
        if name in LIBRARY and LIBRARY[name][0] != "matmul alone":
            checks.append((LIBRARY[name][0], LIBRARY[name][1](*args)))
        for what, got in checks:
            err = rel_err(got.double(), want)[0]
            ok = err < 1e-5
            passed += ok
            failed += not ok
            print("%s %-24s %-8s vs graph: rel %.1e" % ("ok  " if ok else "FAIL", name, what, err))
        module = os.path.join(tmp.name, "selftest_%s.py" % name)
        subprocess.run([tool, "opt", path, "--entry", name, "--size", sizes, "--dtype", "bf16", "--target", "triton",
                        "-o", module], check=True, capture_output=True)
        try:
            load_module(module).run(*make_inputs(g, DTYPES["bf16"], device="cpu"))
            why = "run() took CPU tensors"
        except ValueError as e:
            why = "" if "CUDA device" in str(e) else "%s" % e
        except Exception as e:
            why = "%s: %s" % (type(e).__name__, e)
        passed += not why
        failed += bool(why)
        print("%s %-24s inputs are what run() takes%s" % ("ok  " if not why else "FAIL", name,
                                                           ": " + why if why else ""))
    tmp.cleanup()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        sys.exit(self_test(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="gpu_results.json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget-ms", type=float, default=600, help="timing budget per contender")
    ap.add_argument("--prewarm", type=int, default=os.cpu_count() or 1,
                    help="processes that compile every kernel ahead (0: compile inline)")
    ap.add_argument("--check-graph", action="store_true",
                    help="also compare tilesmith's graph (in PyTorch) with the textbook code")
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    only = set(x for x in args.only.split(",") if x)
    rows = []
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "torch": torch.__version__,
            "device": torch.cuda.get_device_name(), "cuda": torch.version.cuda}
    try:
        import triton
        meta["triton"] = triton.__version__
    except ImportError:
        pass
    try:
        import tilelang
        meta["tilelang"] = tilelang.__version__
    except Exception as e:
        meta["tilelang"] = "unavailable: %s" % e
    print(json.dumps(meta))
    failures = 0
    cases = [c for c in manifest["cases"] if not only or c["name"] in only]
    for case in cases:
        case["graph"] = os.path.join(args.dir, case["graph"])
        case["modules"] = {t: os.path.join(args.dir, p) for t, p in case["modules"].items()}
    if args.prewarm > 0:
        prewarm(cases, args.prewarm, args.seed)
    for case in cases:
        t0 = time.time()
        try:
            row = run_case(case, args, rows)
        except Exception as e:
            rows.append({"case": case["name"], "results": {}, "error": "%s: %s" % (type(e).__name__, e)})
            print("case %s failed: %s" % (case["name"], traceback.format_exc()[-1500:]))
            failures += 1
            save_json(args.json, meta, rows)
            continue
        bad = [t for t, x in row["results"].items() if x.get("ok") is False or "error" in x]
        failures += bool(bad)
        print("%-32s %5.1fs %s" % (case["name"], time.time() - t0, "FAIL " + ",".join(bad) if bad else "ok"),
              flush=True)
        for t in bad:
            x = row["results"][t]
            print("    %s: %s" % (t, x.get("error") or "rel err %.3g %s" % (x["rel_err"], x.get("why", ""))),
                  flush=True)
        torch.cuda.empty_cache()
        save_json(args.json, meta, rows)  # after every case: a cut-off run keeps what it measured
    print_table(rows)
    print("\n%d cases, %d with a failure" % (len(rows), failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
