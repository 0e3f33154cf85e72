"""GPU harness: check and time tilesmith's emitted kernels against PyTorch.

Run on a machine with an NVIDIA GPU and PyTorch (and Triton; TileLang for the
TileLang modules), after bench/prepare.sh has written the modules:

    python3 bench/gpu_harness.py bench/out [--only NAME,...] [--json OUT.json]
    python3 bench/gpu_harness.py --self-test ./tilesmith   (CPU: the peers' code
                                                             agrees with the graphs)
    python3 bench/gpu_harness.py --table OUT.json          (reprint a run's table)

For every case of bench/out/manifest.json, in one process:

1. fresh random inputs in the storage type (bf16 by default), integers in
   the valid range for Index inputs;
2. the float32 reference: the case's textbook PyTorch code (below) on float32
   copies of the same inputs, when it fits the entry: the textbook for the
   generic definition's name must take as many tensors as the entry, give its
   output shape (tried on the meta device) and agree with tilesmith's graph
   JSON evaluated in PyTorch (normwise 1e-3, float32).  Otherwise, or for
   cases without one, the reference is the graph JSON in PyTorch, and the
   row's "reference" says why the textbook did not fit;
3. each emitted module (TileLang, Triton, and every variant the manifest
   lists): its output buffer is poisoned with NaN first (the module's
   run(out=...) when it takes one; otherwise the caching allocator is filled
   with NaN just before the call), then compared with the reference by the
   normwise relative error ||out - ref|| / ||ref|| and element by element
   with the module's own bound (its RTOL and ATOL: one wrong tile among
   thousands hardly moves the normwise error); a module whose two direct
   calls on the same inputs disagree (found when a graph replay differs)
   fails too.  The peers' outputs get the normwise error (recorded; judged
   only for flex_attention);
4. timing of every contender: PyTorch eager (the same code, in the storage
   type), torch.compile of it (TorchDynamo reset before each case, each
   compile a fresh function; fullgraph first; a compile that captured no
   graph is flagged "fallback", never reported as compiled), optionally
   torch.compile max-autotune, the library kernel where one exists (SDPA,
   cuBLAS), flex_attention for the masked attentions, and the emitted
   modules.  Each contender is warmed up on a side stream, one call is
   captured into a CUDA graph (private memory pool) and the graph's replay is
   checked against a direct call (its output poisoned with NaN first); "ms"
   is the median of triton.testing.do_bench over g.replay(), so host launch
   overhead does not decide the small cases ("graph": true).  A contender
   that cannot be captured (it syncs, or launches outside the capturing
   stream) is timed by plain calls instead ("graph": false, "graph_error").
   "ms_eager_launch" is the plain calls' median beside the replay's.
   do_bench zeroes a 256 MB buffer before every timed call, flushing the
   L2 cache (50 MB on an H200) between runs, replays included;
5. a roofline floor per case from rates measured in the same run: max(the
   least HBM traffic (inputs read once, output written once) / the measured
   copy bandwidth, the graph's matmul flops / the measured bf16 cuBLAS rate),
   and each contender's "floor_frac" = floor / its time.

It prints one table and the geometric means of torch.compile's time over
ours, and writes every number to a JSON file (bench/plot.py draws it).
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
import types
import warnings

import torch
import torch.nn.functional as F

from benchrows import PEERS, module_kind, row_library, usable_ms

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TOL = {"bf16": 3e-2, "f16": 5e-3, "f32": 1e-4}
FIT_TOL = 1e-3        # textbook against the graph, both float32: far above rounding, far below a different function
REPLAY_TOL = 1e-2     # a graph replay against a direct call of the same contender
GRAPH_WARMUP = 3      # calls on a side stream before a capture
DEV = "cuda"          # where cases run (the CPU tests set "cpu")

FLOOR_NOTE = ("floor = max(least HBM bytes (every input read once, the output written once) / measured copy "
              "bandwidth, the graph's matmul flops / measured bf16 cuBLAS rate); element-wise and exp work is "
              "ignored, so it is a lower bound on time for dense work.  Causal and windowed attention count the "
              "dense products' flops although masked tiles can be skipped: their floor is higher than the true "
              "one and their floor_frac optimistic.  Measured rates are not datasheet peaks: a kernel may reach "
              "a fraction slightly above 1.  No launch or latency term: cases of a few microseconds stay far "
              "below 1.")


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

# the best library kernel, where one exists (used only when the textbook fits)
LIBRARY = {
    "attention": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(q, k, v)),
    "causalAttention": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    "gqaDecode": ("SDPA", lambda q, k, v: F.scaled_dot_product_attention(
        q[:, :, None, :], k, v, enable_gqa=True)[:, :, 0, :]),
    "matmulLargeK": ("cuBLAS", lambda a, b: torch.matmul(a, b)),
    "rmsnormMatmul": ("matmul alone", lambda x, g, w: torch.matmul(x, w)),
}
NOT_THE_SAME = {"matmul alone"}  # library contenders that compute less than the case (no error recorded)


def textbook_default(fn, name):
    """The default value of fn's keyword parameter `name`."""
    return inspect.signature(fn).parameters[name].default


def flex_mods(gname, window=None, cap=None):
    """(mask_mod, score_mod) for flex_attention computing the textbook's
    masked attention of generic `gname` exactly, or None where there is none.
    flex_attention scales q.k by 1/sqrt(D) before score_mod, as the textbook
    divides before its soft cap; the window and cap default to the
    textbook's."""
    if gname == "causalAttention":
        def causal(b, h, qi, ki):
            return ki <= qi
        return causal, None
    if gname == "softcapWindowAttention":
        w = textbook_default(softcap_window_attention, "window") if window is None else window
        c = textbook_default(softcap_window_attention, "cap") if cap is None else cap

        def windowed(b, h, qi, ki):  # j <= i and i < j + window
            return (ki <= qi) & (qi < ki + w)

        def softcap(score, b, h, qi, ki):
            return c * torch.tanh(score / c)
        return windowed, softcap
    return None


def make_flex(gname, inputs, compiled=True, window=None, cap=None):
    """A no-argument callable running flex_attention (through torch.compile,
    which it needs to be fast) on `inputs` (q, k, v), its block mask built
    here, outside any timed region; None for generics without one."""
    mods = flex_mods(gname, window, cap)
    if mods is None:
        return None
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    mask_mod, score_mod = mods
    q, k, v = inputs
    n_q, n_kv = q.shape[-2], k.shape[-2]
    block_mask = create_block_mask(mask_mod, None, None, n_q, n_kv, device=q.device)
    flex = torch.compile(flex_attention, dynamic=False) if compiled else flex_attention
    return lambda: flex(q, k, v, score_mod=score_mod, block_mask=block_mask)


# ---------------------------------------------------------------------------
# a PyTorch evaluation of tilesmith's graph JSON (for cases with no textbook
# code, e.g. the whole models, and to check the textbook's fit)

UNARY = {"neg": torch.neg, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "tanh": torch.tanh, "erf": torch.erf, "sigmoid": torch.sigmoid,
         "relu": torch.relu, "abs": torch.abs}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
          "max": torch.maximum, "min": torch.minimum, "lt": torch.lt, "le": torch.le,
          "gt": torch.gt, "ge": torch.ge, "eq": torch.eq, "ne": torch.ne,
          # Lean's Int division: Euclidean, x / 0 = 0
          "idiv": lambda a, b: torch.where(b == 0, 0, torch.div(a, torch.where(b == 0, 1, b), rounding_mode="floor")
                                           + ((b < 0) & (torch.remainder(a, torch.where(b == 0, 1, b)) != 0)).long())}
REDUCE = {"sum": lambda x, a: x.sum(a, keepdim=True), "amax": lambda x, a: x.amax(a, keepdim=True),
          "amin": lambda x, a: x.amin(a, keepdim=True)}


def graph_fn(graph):
    """The graph JSON as a PyTorch function of the entry's tensors.  Each
    intermediate is dropped after its last use (peak memory of a few
    intermediates, not all), and scalar operands become device tensors by a
    fill kernel rather than a host copy, so the function can be captured into
    a CUDA graph."""
    nodes = graph["nodes"]
    input_pos = {x["node"]: i for i, x in enumerate(graph["inputs"])}
    last_use = {}
    for idx, n in enumerate(nodes):
        for i in n["in"]:
            last_use[i] = idx

    def const(v):
        return float(v)  # numbers, or the strings "inf", "-inf", "nan"

    def fn(*args):
        val = {}
        for idx, n in enumerate(nodes):
            op, ins = n["op"], [val[i] for i in n["in"]]
            if op == "input":
                r = args[input_pos[n["id"]]]
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
                    a = torch.full((), a, device=args[0].device,
                                   dtype=b.dtype if torch.is_tensor(b) and b.is_floating_point() else None)
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
                x, idx_t = ins
                ax = n["axis"]
                shape = list(torch.broadcast_shapes(
                    tuple(1 if d == ax else s for d, s in enumerate(x.shape)),
                    tuple(1 if d == ax else s for d, s in enumerate(idx_t.shape))))
                xs, ids = list(shape), list(shape)
                xs[ax], ids[ax] = x.shape[ax], idx_t.shape[ax]
                r = torch.gather(x.expand(xs), ax, idx_t.expand(ids))
            else:
                raise ValueError("unknown op " + op)
            val[n["id"]] = r
            del ins, r
            for i in set(n["in"]):
                if last_use[i] == idx and i != graph["output"]:
                    del val[i]
        return val[graph["output"]]

    args_dtype = [torch.float32]

    def typed(*args):
        floats = [a for a in args if a.is_floating_point()]
        args_dtype[0] = floats[0].dtype if floats else torch.float32
        return fn(*args)

    return typed


def graph_cost(graph):
    """(matmul flops, element count of each input, element count of the
    output) of the graph JSON: a matmul node costs 2 * (its output's
    elements) * K, K the contracted dimension (its left operand's last)."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    flops = 0
    for n in graph["nodes"]:
        if n["op"] == "matmul":
            a = nodes[n["in"][0]]["shape"]
            flops += 2 * math.prod(n["shape"]) * (a[-1] if a else 1)
    ins = [math.prod(nodes[x["node"]]["shape"]) for x in graph["inputs"]]
    return flops, ins, math.prod(nodes[graph["output"]]["shape"])


def case_floor(graph, inputs, out_dtype, peaks):
    """The case's roofline floor (a dict for the row) from the measured
    rates `peaks`: bytes are the inputs as given plus the output in the
    storage type."""
    flops, _, out_elems = graph_cost(graph)
    nbytes = sum(x.numel() * x.element_size() for x in inputs)
    nbytes += out_elems * torch.empty((), dtype=out_dtype).element_size()
    r = {"flops": flops, "bytes_min": nbytes}
    if peaks and peaks.get("copy_GBps") and peaks.get("bf16_mm_TFLOPs"):
        mem_ms = nbytes / (peaks["copy_GBps"] * 1e9) * 1e3
        mm_ms = flops / (peaks["bf16_mm_TFLOPs"] * 1e12) * 1e3
        r["floor_ms"] = max(mem_ms, mm_ms)
        r["floor_bound"] = "memory" if mem_ms >= mm_ms else "matmul"
    return r


# ---------------------------------------------------------------------------
# which reference: the textbook when it fits the entry

def fit_textbook(gname, graph):
    """(the textbook function for generic `gname` if it fits the graph's
    entry, else None; why it does not fit, "" when it does or when there is
    none).  It must take exactly the entry's tensors (positional parameters
    without defaults) and, tried on meta tensors of the entry's shapes, give
    the entry's output shape.  Looked up by the generic definition's name
    alone, a user program named like an example (say gqaDecode with two
    extra gain parameters) would otherwise get the wrong function."""
    fn = TEXTBOOK.get(gname)
    if fn is None:
        return None, ""
    nodes = {n["id"]: n for n in graph["nodes"]}
    n_in = len(graph["inputs"])
    try:
        params = list(inspect.signature(fn).parameters.values())
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        required = [p for p in params if p.kind in positional and p.default is p.empty]
        if len(required) != n_in:
            return None, "the textbook %s takes %d tensors, the entry %d" % (gname, len(required), n_in)
        metas = [torch.empty(nodes[x["node"]]["shape"], device="meta",
                             dtype=torch.float32 if nodes[x["node"]]["kind"] == "real" else torch.int64)
                 for x in graph["inputs"]]
        with torch.no_grad():
            out = fn(*metas)
    except NotImplementedError:  # an op without a meta kernel: the float32 run decides
        return fn, ""
    except Exception as e:
        return None, "the textbook %s fails on the entry's shapes: %s" % (gname, short(e))
    want = tuple(nodes[graph["output"]]["shape"])
    if not torch.is_tensor(out) or tuple(out.shape) != want:
        got = tuple(out.shape) if torch.is_tensor(out) else type(out).__name__
        return None, "the textbook %s gives shape %s, the entry %s" % (gname, got, want)
    return fn, ""


def textbook_agrees(textbook, gfn, inputs32):
    """(the textbook's output on inputs32, the graph's, the rel err between
    them, why the textbook does not fit: "" unless it disagrees with the
    graph beyond FIT_TOL)."""
    ref = textbook(*inputs32)
    g_ref = gfn(*inputs32)
    err, why = rel_err(ref, g_ref)
    if not err <= FIT_TOL:
        return ref, g_ref, err, "the textbook disagrees with the graph: rel err %.3g%s" % (
            err, " (%s)" % why if why else "")
    return ref, g_ref, err, ""


# ---------------------------------------------------------------------------

def short(e, n=300):
    """An exception as one short line: its type and first line."""
    lines = [x for x in str(e).strip().splitlines() if x.strip()]
    return ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:n]


def sync():
    """Wait for the device (nothing on the CPU)."""
    if DEV == "cuda":
        torch.cuda.synchronize()


def graphs_available():
    """Whether contenders can be captured into CUDA graphs here."""
    return DEV == "cuda"


STUCK = {}  # module path -> why: a kernel of it did not finish compiling in the prewarm


def load_module(path):
    """Import an emitted module from its file."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def make_inputs(graph, dtype, gen=None, device=None, unit_weights=False):
    """Fresh random inputs, drawn as tilesmith draws them (ir/inputs.c; the
    graph JSON carries each input's rule): normal(0, 1) for real inputs,
    normal(0, 1/fan_in) for weights feeding a matmul (normal(0, 1) with
    unit_weights), uniform over [0, bound) for Index inputs."""
    device = device or DEV
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
    """(normwise ||out - ref|| / ||ref||, why it is inf: "" when finite)."""
    out, ref = out.float(), ref.float()
    if out.shape != ref.shape:
        return float("inf"), "shape %s != %s" % (tuple(out.shape), tuple(ref.shape))
    if not torch.isfinite(out).all():
        bad = (~torch.isfinite(out)).sum().item()
        return float("inf"), "%d non-finite elements (unwritten or overflow)" % bad
    num = torch.linalg.vector_norm((out - ref).double()).item()
    den = torch.linalg.vector_norm(ref.double()).item()
    return num / max(den, 1e-300), ""


def elementwise_bad(out, ref, rtol, atol):
    """(elements with |out - ref| > atol * max|ref| + rtol * |ref|, the
    largest |out - ref|): the bound every emitted module's own compare()
    applies (its RTOL, ATOL; (0, 0.0) when the module has none).  The
    normwise error alone dilutes one wrong tile among thousands."""
    if rtol is None or atol is None or out.shape != ref.shape:
        return 0, 0.0
    out, ref = out.double(), ref.double()
    fin = torch.isfinite(ref)
    scale = ref[fin].abs().max().item() if fin.any() else 0.0
    diff = (out - ref).abs()
    bad = ~((out == ref) | (diff <= atol * scale + rtol * ref.abs()))
    return int(bad.sum().item()), float(diff[torch.isfinite(diff)].max().item()) if torch.isfinite(diff).any() else 0.0


def same_result(a, b, tol):
    """Whether a and b (a graph replay's output and a direct call's) are the
    same result: same shape, non-finite in the same places, the rest within
    tol normwise."""
    if not (torch.is_tensor(a) and torch.is_tensor(b)) or a.shape != b.shape:
        return False
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(fa, fb):
        return False
    if not a.is_floating_point():
        return torch.equal(a, b)
    a, b = a.float()[fa], b.float()[fb]
    num = torch.linalg.vector_norm((a - b).double()).item()
    den = torch.linalg.vector_norm(b.double()).item()
    return num <= tol * max(den, 1e-30)


def poison_allocator(nbytes):
    """Fill the caching allocator's free memory with NaN bytes."""
    t = torch.full((max(nbytes // 4, 1) + 1024,), float("nan"), device=DEV)
    del t


def bench(fn, budget_ms=600, warmup_cap_ms=200):
    """Median ms of fn() by triton.testing.do_bench (CUDA events; a 256 MB
    buffer zeroed before each timed call flushes L2), its warm-up and
    repetitions scaled to one call's time within budget_ms."""
    import triton.testing
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    once = (time.perf_counter() - t0) * 1e3
    rep = max(min(budget_ms, once * 50), once * 3, 20)
    return triton.testing.do_bench(fn, warmup=max(min(once * 5, warmup_cap_ms), 5), rep=rep, return_mode="median")


def capture_graph(fn):
    """(CUDA graph of one call of fn, that call's output): fn is warmed up on
    a side stream first, as capture requires; the graph gets a private memory
    pool, so what fn allocates (outputs, scratch) stays valid for replays."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(GRAPH_WARMUP):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    prev = torch.cuda.current_stream()
    try:
        # its own capture stream: one left capturing by a failure spoils no later capture
        with torch.cuda.graph(g, stream=torch.cuda.Stream()):
            out = fn()
    finally:
        # a failed capture_end leaves torch.cuda.graph's side stream current
        torch.cuda.set_stream(prev)
    torch.cuda.synchronize()
    return g, out


def drain_cuda_error():
    """After a failed capture: let a tiny kernel and a sync raise (and so
    clear) a launch error left pending by a library that did not check it,
    so that it does not surface in an unrelated later call."""
    for _ in range(2):
        try:
            torch.zeros(1, device=DEV).add_(1)
            torch.cuda.synchronize()
            return
        except Exception:
            pass


class Nondeterministic(RuntimeError):
    """A contender whose direct calls on the same inputs disagree."""


def check_replay(g, static, fn, inputs):
    """Raise unless replaying g recomputes fn: the captured output (when it
    is a floating tensor not sharing an input's memory) is poisoned with NaN,
    the graph replayed, and the result compared with a direct call of fn.  A
    graph that captured none of fn's kernels (launched outside the capturing
    stream) fails here instead of timing an empty replay."""
    want = fn()
    sync()
    if not torch.is_tensor(static) or not torch.is_tensor(want):
        return "output not a tensor: replay unchecked"
    ptrs = {x.untyped_storage().data_ptr() for x in inputs if torch.is_tensor(x)}
    poisoned = static.is_floating_point() and static.untyped_storage().data_ptr() not in ptrs
    if poisoned:
        static.fill_(float("nan"))
    g.replay()
    sync()
    if not same_result(static, want, REPLAY_TOL):
        again = fn()
        sync()
        if not same_result(again, want, REPLAY_TOL):
            raise Nondeterministic("two direct calls on the same inputs differ beyond rounding "
                                   "(normwise %g): a race, or a miscompiled kernel" % REPLAY_TOL)
        raise RuntimeError("the replay's output differs from a direct call's (the graph missed kernels?)")
    return "" if poisoned else "output shares an input's memory: replay checked unpoisoned"


def count_launches(fn):
    """What one call of fn launches on the GPU, read by torch.profiler:
    {"kernels": n, "copies": m, "names": {kernel name: launches}} (copies
    and memsets apart; names cut to 100 characters)."""
    from torch.profiler import ProfilerActivity, profile
    sync()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        sync()
    names, copies = {}, 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        low = e.name.lower()
        if "memcpy" in low or "memset" in low:
            copies += 1
            continue
        names[e.name[:100]] = names.get(e.name[:100], 0) + 1
    return {"kernels": sum(names.values()), "copies": copies, "names": names}


NCU_MARKS = []  # (case, contender) in the order their marker kernels ran


def ncu_mark_kernel():
    """A Triton kernel named tilesmith_ncu_mark, launched just before each
    profiled call so that bench/ncu_bytes.py can cut ncu's list of kernels
    into contenders (ncu reports kernels in launch order, not who launched
    them)."""
    import triton
    import triton.language as tl

    @triton.jit
    def tilesmith_ncu_mark(p):
        tl.store(p, 1)
    buf = torch.zeros(1, device=DEV, dtype=torch.int32)
    return lambda: tilesmith_ncu_mark[(1,)](buf)


def ncu_profile(fn, label):
    """--ncu-marks: one call of fn (after a warm call) between
    cudaProfilerStart and cudaProfilerStop, the marker kernel first, for a
    run under `ncu --profile-from-start off` (bench/gpu_session.sh bytes)."""
    global NCU_MARK
    if "NCU_MARK" not in globals():
        NCU_MARK = ncu_mark_kernel()
        NCU_MARK()
    fn()
    sync()
    NCU_MARKS.append(label)
    torch.cuda.profiler.start()
    NCU_MARK()
    fn()
    sync()
    torch.cuda.profiler.stop()
    return len(NCU_MARKS) - 1


def time_contender(fn, inputs, res, args, label=None):
    """Fill res with fn's time: "ms" is the median over CUDA-graph replays
    ("graph": true) when capture and the replay check work, else over plain
    calls ("graph": false, "graph_error"); "ms_eager_launch" is the plain
    calls' median beside a replay's (short budget).  Never raises: a failure
    lands in res["error"].  With --count-launches it counts the kernels one
    call launches instead (res["launches"]) and times nothing."""
    if args.ncu_marks:
        try:
            res["ncu_mark"] = ncu_profile(fn, label)
        except Exception as e:
            res["ncu_error"] = short(e)
        return
    if args.count_launches:
        try:
            res["launches"] = count_launches(fn)
        except Exception as e:
            res["launches_error"] = short(e)
        return
    g = static = None
    if args.graph and graphs_available():
        try:
            g, static = capture_graph(fn)
            note = check_replay(g, static, fn, inputs)
            if note:
                res["graph_note"] = note
            res["graph"] = True
        except Exception as e:
            res["graph"], res["graph_error"] = False, short(e)
            if isinstance(e, Nondeterministic) and "ok" in res:  # a result judged wrong, whatever it times
                res["ok"], res["why"] = False, short(e)
            g = static = None
            drain_cuda_error()
        if g is not None:
            try:
                res["ms"] = bench(g.replay, args.budget_ms)
            except Exception as e:
                res["graph"], res["graph_error"] = False, "replay: " + short(e)
                g = static = None
                drain_cuda_error()
    else:
        res["graph"], res["graph_error"] = False, "CUDA graphs off (--no-graph)" if not args.graph else "no CUDA"
    if g is None:
        try:
            res["ms"] = bench(fn, args.budget_ms)
        except Exception as e:
            res["error"] = short(e)
    elif args.launch_budget_ms > 0:
        try:
            res["ms_eager_launch"] = bench(fn, args.launch_budget_ms, warmup_cap_ms=50)
        except Exception as e:  # the replay's time stands
            res["ms_eager_launch_error"] = short(e)
    del g, static


# ---------------------------------------------------------------------------
# torch.compile, fairly: a fresh TorchDynamo per case, a fresh function per
# compile, and a compile that captured nothing is flagged, not timed as one

def dynamo_setup():
    """Raise TorchDynamo's recompile limits (eight recompiles of one code
    object, then it silently runs eager code) and make hitting one an error;
    keep float32 matmuls in full float32 (the default; the references and
    the textbook-against-graph check rely on it)."""
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    except Exception:
        pass
    cfg = torch._dynamo.config
    for name, v in (("recompile_limit", 1024), ("cache_size_limit", 1024),
                    ("accumulated_recompile_limit", 1 << 16), ("accumulated_cache_size_limit", 1 << 16),
                    ("fail_on_recompile_limit_hit", True)):
        if hasattr(cfg, name):
            try:
                setattr(cfg, name, v)
            except Exception:
                pass


def dynamo_reset():
    """Forget every compiled frame (called before each case)."""
    try:
        torch._dynamo.reset()
        return ""
    except Exception as e:
        return short(e)


def fresh_function(fn, tag):
    """A new function calling fn, with its own code object named tag:
    TorchDynamo keeps compiled code per code object, so no two compiles here
    share a cache (or its recompile limit)."""
    def call(*a):
        return fn(*a)
    code = call.__code__.replace(co_name=tag)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=tag)
    return types.FunctionType(code, call.__globals__, tag, None, call.__closure__)


def dynamo_graphs():
    """TorchDynamo's count of graphs compiled so far in this process, or None."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:
        return None


def inductor_metrics():
    """Inductor's counters (torch._inductor.metrics): kernels it generated
    and its estimate of the bytes they access (each buffer once per kernel;
    extern calls such as cuBLAS products are not in either), or None."""
    try:
        from torch._inductor import metrics
        got = {"generated_kernels": metrics.generated_kernel_count}
        # zero when Inductor was not asked to count (torch 2.11 fills it only
        # with profile_bandwidth): not a measurement of no bytes
        if metrics.num_bytes_accessed:
            got["bytes"] = metrics.num_bytes_accessed
        return got
    except Exception:
        return None


def inductor_reset():
    try:
        from torch._inductor import metrics
        metrics.reset()
    except Exception:
        pass


def compile_contender(fn, inputs, tag, mode=None):
    """(compiled fn, its first output, info): torch.compile(dynamic=False) of
    a fresh function calling fn, fullgraph first; when that raises (graph
    breaks) again without fullgraph, info["graph_breaks"] saying why.
    info["fallback"] is set when TorchDynamo compiled no graph on the first
    call, i.e. the "compiled" function runs eager code."""
    info = {"mode": mode or "default"}
    t0 = time.time()
    first_err = None
    for fullgraph in (True, False):
        kw = {"dynamic": False, "fullgraph": fullgraph}
        if mode:
            kw["mode"] = mode
        compiled = torch.compile(fresh_function(fn, tag + ("" if fullgraph else "_breaks")), **kw)
        before = dynamo_graphs()
        inductor_reset()
        try:
            out = compiled(*inputs)
            sync()
        except Exception as e:
            if fullgraph:
                first_err = e
                continue
            raise
        after = dynamo_graphs()
        break
    info["compile_s"] = round(time.time() - t0, 2)
    m = inductor_metrics()
    if m and m["generated_kernels"]:  # 0: the code came from a cache (see prewarm)
        info["inductor"] = m
    info["fullgraph"] = fullgraph
    if first_err is not None:
        info["graph_breaks"] = short(first_err)
    if before is None or after is None:
        info["fallback_check"] = "unavailable (no torch._dynamo.utils.counters)"
    else:
        info["dynamo_graphs"] = after - before
        if after - before <= 0:
            info["fallback"] = "TorchDynamo compiled no graph on the first call: it runs eager code"
    return compiled, out, info


# ---------------------------------------------------------------------------

def measure_peaks():
    """Copy bandwidth (a 1 GiB bf16 copy, read + write) and bf16 matmul rate
    (8192^3 through cuBLAS), medians of do_bench, for the floors."""
    import triton.testing

    def copy_ms(n):
        src = torch.ones(n, dtype=torch.bfloat16, device=DEV)
        dst = torch.empty_like(src)
        return triton.testing.do_bench(lambda: dst.copy_(src), warmup=50, rep=300, return_mode="median")

    def mm_ms(m):
        a = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
        c = torch.empty(m, m, device=DEV, dtype=torch.bfloat16)
        return triton.testing.do_bench(lambda: torch.mm(a, b, out=c), warmup=50, rep=300, return_mode="median")

    peaks = {}
    n, m = 1 << 29, 8192  # bf16 elements: 1 GiB; the matmul's side
    try:
        peaks["copy_GBps"] = 2 * n * 2 / (copy_ms(n) * 1e-3) / 1e9
    except Exception as e:
        peaks["copy_error"] = short(e)
    try:
        peaks["bf16_mm_TFLOPs"] = 2 * m ** 3 / (mm_ms(m) * 1e-3) / 1e12
    except Exception as e:
        peaks["mm_error"] = short(e)
    torch.cuda.empty_cache()
    return peaks


def l2_note():
    """What the installed triton.testing.do_bench does about L2, read from
    its source and driver."""
    try:
        import triton
        import triton.testing
        src = inspect.getsource(triton.testing.do_bench)
        if "clear_cache" not in src:
            return "not flushed: this triton.testing.do_bench has no clear_cache (L2 may hold inputs between runs)"
        size = ""
        try:
            drv = triton.runtime.driver.active
            cache = drv.get_empty_cache_for_benchmark()
            size = " %d MB" % (cache.numel() * cache.element_size() // (1 << 20))
            del cache
        except Exception:
            pass
        return ("flushed by triton.testing.do_bench between runs: it zeroes a%s buffer before every timed call, "
                "outside the timed events (not before its warm-up calls); graph replays are timed the same way" % size)
    except Exception as e:
        return "unknown (%s)" % short(e)


def case_inputs(case, seed):
    """(graph, fresh inputs in the storage type, the case's textbook PyTorch
    if it fits the entry (else None), the eager function: that textbook or
    the graph in PyTorch, why the textbook did not fit ("" if it did or
    there is none))."""
    graph = json.load(open(case["graph"]))
    gen = torch.Generator(device=DEV)
    gen.manual_seed(seed)
    inputs = make_inputs(graph, DTYPES[case.get("dtype", "bf16")], gen)
    textbook, why = fit_textbook(case["generic"], graph)
    return graph, inputs, textbook, textbook if textbook else graph_fn(graph), why


def case_tag(case):
    """A Python identifier naming the case (the compiled functions' names)."""
    return "compiled_" + "".join(c if c.isalnum() else "_" for c in case["name"])


def run_case(case, args, rows, peaks=None):
    """Check and time every contender of one manifest case; the row (also
    appended to rows first, so a case that raises keeps what it measured)."""
    dtype = DTYPES[case.get("dtype", "bf16")]
    tol = TOL[case.get("dtype", "bf16")]
    gname = case["generic"]
    row = {"case": case["name"], "entry": case["entry"], "file": case["file"], "results": {},
           "predicted_us": case.get("predicted_us", {}), "plans": case.get("plans", {})}
    rows.append(row)
    err = dynamo_reset()
    if err:
        row["dynamo_reset_error"] = err
    graph, inputs, textbook, eager, fit_why = case_inputs(case, args.seed)
    inputs32 = [x.float() if x.is_floating_point() else x for x in inputs]
    try:
        row.update(case_floor(graph, inputs, dtype, peaks))
    except Exception as e:
        row["floor_error"] = short(e)
    results = row["results"]
    optional = set()  # contenders whose errors are not failures of the run
    with torch.no_grad():
        gfn = graph_fn(graph)
        ref = g_ref = None
        if textbook is not None:
            try:
                ref, g_ref, row["graph_vs_textbook"], fit_why = textbook_agrees(textbook, gfn, inputs32)
            except Exception as e:
                fit_why = "the textbook %s raised %s" % (gname, short(e))
            if fit_why:
                textbook, eager, ref = None, gfn, g_ref
        if textbook is None:
            if ref is None:
                ref = gfn(*inputs32)
            row["reference"] = "graph JSON in PyTorch" + (" (textbook did not fit: %s)" % fit_why if fit_why else "")
            if fit_why:
                print("    %s: %s; the reference is the graph JSON, no library contender" % (case["name"], fit_why),
                      flush=True)
        else:
            row["reference"] = "textbook PyTorch"
        g_ref = None
        sync()
        out = got = buf = None
        # PyTorch itself in the storage type: how far rounding alone moves this
        # case's result (a floor for the emitted kernels; not judged)
        try:
            results["eager"] = {"rel_err": rel_err(eager(*inputs), ref)[0]}
        except Exception as e:
            results["eager"] = {"error": short(e)}
        contenders = [("eager", lambda: eager(*inputs))]
        tag = case_tag(case)
        try:
            compiled, out, info = compile_contender(eager, inputs, tag)
            info["rel_err"] = rel_err(out, ref)[0]
            if "inductor" not in info and case["name"] in INDUCTOR:
                info["inductor"] = dict(INDUCTOR[case["name"]], read_by="the prewarm's worker")
            results["torch.compile"] = info
            contenders.append(("torch.compile", lambda: compiled(*inputs)))
            if info.get("fallback"):
                print("    WARNING %s: torch.compile fell back to eager (%s); not counted as compiled"
                      % (case["name"], info["fallback"]), flush=True)
        except Exception as e:
            results["torch.compile"] = {"error": short(e), "trace": traceback.format_exc()[-1500:]}
        if args.max_autotune:
            name = "torch.compile max-autotune"
            optional.add(name)
            try:
                compiled_ma, out, info = compile_contender(eager, inputs, tag + "_max_autotune",
                                                           mode="max-autotune-no-cudagraphs")
                info["rel_err"] = rel_err(out, ref)[0]
                results[name] = info
                contenders.append((name, lambda: compiled_ma(*inputs)))
            except Exception as e:
                results[name] = {"error": short(e)}
        if textbook is not None and gname in LIBRARY:
            lname, lfn = LIBRARY[gname]
            row["library"] = lname
            try:
                out = lfn(*inputs)
                results[lname] = {} if lname in NOT_THE_SAME else {"rel_err": rel_err(out, ref)[0]}
                contenders.append((lname, lambda: lfn(*inputs)))
            except Exception as e:
                results[lname] = {"error": short(e)}
        if args.flex and textbook is not None and flex_mods(gname) is not None:
            name = "flex_attention"
            optional.add(name)
            try:
                t0 = time.time()
                flex = make_flex(gname, inputs)
                out = flex()
                sync()
                e, why = rel_err(out, ref)
                results[name] = {"rel_err": e, "ok": e <= tol, "why": why, "compile_s": round(time.time() - t0, 2)}
                contenders.append((name, flex))
            except Exception as e:
                results[name] = {"error": short(e), "trace": traceback.format_exc()[-1500:]}
        for target, path in case["modules"].items():
            pred = case.get("predicted_us", {}).get(target)
            if path in STUCK:
                results[target] = {"error": STUCK[path]}
                continue
            try:
                mod = load_module(path)
            except Exception as e:  # a target missing on this machine
                results[target] = {"error": "import: %s" % short(e)}
                continue
            # a keyword-only out=, not an input the Lean source happens to call `out`
            params = inspect.signature(mod.run).parameters
            takes_out = "out" in params and params["out"].kind == inspect.Parameter.KEYWORD_ONLY
            out_bytes = ref.numel() * 4
            try:
                if takes_out:
                    buf = torch.full(tuple(ref.shape), float("nan"), device=DEV, dtype=dtype)
                    got = mod.run(*inputs, out=buf)
                else:
                    poison_allocator(out_bytes * 4)
                    got = mod.run(*inputs)
                sync()
                e, why = rel_err(got, ref)
                bad, worst = elementwise_bad(got, ref, getattr(mod, "RTOL", None), getattr(mod, "ATOL", None))
                if bad and not why:
                    why = "%d elements beyond the module's own bound (RTOL %g, ATOL %g of max|ref|); worst %.3g" % (
                        bad, mod.RTOL, mod.ATOL, worst)
                results[target] = {"rel_err": e, "ok": e <= tol and not bad, "why": why, "bad_elements": bad,
                                   "poison": "out=" if takes_out else "allocator"}
                contenders.append((target, lambda m=mod: m.run(*inputs)))
            except Exception as e:
                results[target] = {"error": short(e), "trace": traceback.format_exc()[-2000:]}
            if pred is not None:
                results[target]["predicted_us"] = pred
            got = buf = None
        out = ref = inputs32 = None  # free what the checks held before timing
        for name, fn in contenders:
            res = results.setdefault(name, {})
            time_contender(fn, inputs, res, args, (case["name"], name))
            if row.get("floor_ms") and res.get("ms"):
                res["floor_frac"] = row["floor_ms"] / res["ms"]
    row["optional"] = sorted(optional)
    return row


# ---------------------------------------------------------------------------
# compile ahead, in parallel: TileLang kernels (nvcc), Triton kernels and
# torch.compile of every case (and its flex_attention), each in a worker
# process, so the measuring process below finds every kernel in the on-disk
# caches (TileLang's TILELANG_CACHE_DIR, Triton's ~/.triton/cache, Inductor's
# FX graph cache) and its wall time goes to checking and timing.  Nothing is
# measured here.  (torch.compile max-autotune is compiled where it is timed:
# its autotuning would time kernels against the other workers.)

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


# Inductor's counters per case, as the process that generated the code read
# them (the prewarm's worker; the measuring process then hits the cache)
INDUCTOR = {}


def _warm_tilelang(path, name):
    """Compile one TileLang kernel of a module (worker process)."""
    return _warm("tilelang", path, name, lambda: load_module(path).compiled_kernel(name))


TRITON_DTYPES = {"*bf16": torch.bfloat16, "*fp16": torch.float16, "*fp32": torch.float32,
                 "*i64": torch.int64, "*i32": torch.int32, "*i1": torch.bool}


def _warm_triton(path, idx):
    """Compile one Triton kernel of a module for its launch options (worker)."""
    def work():
        # (kernel, pointer signature, grid, num_warps[, num_stages or 0])
        entry = load_module(path).TRITON_KERNELS[idx]
        kernel, sig, grid, warps = entry[:4]
        opts = {"num_warps": warps}
        if len(entry) > 4 and entry[4]:
            opts["num_stages"] = entry[4]  # as run() launches it, so the cache key matches
        kernel.warmup(*[TRITON_DTYPES[t] for t in sig.values()], grid=grid, **opts)
    return _warm("triton", path, "kernel %d" % idx, work)


def _warm_compile(case, seed, flex):
    """Run torch.compile of a case (and its flex_attention) once (GPU worker)."""
    def work():
        dynamo_setup()
        _, inputs, textbook, eager, _ = case_inputs(case, seed)
        with torch.no_grad():
            _, _, info = compile_contender(eager, inputs, case_tag(case))
            if info.get("inductor"):
                INDUCTOR[case["name"]] = info["inductor"]
            if flex and textbook is not None and flex_mods(case["generic"]) is not None:
                make_flex(case["generic"], inputs)()
        torch.cuda.synchronize()
    got = _warm("torch.compile", case["name"], "", work)
    return got + (INDUCTOR.get(case["name"]),)



def prewarm(cases, workers, seed, flex=True, deadline_s=300.0):
    """Fill the compile caches for `cases` with `workers` CPU processes (plus
    a few GPU processes for torch.compile); prints a line per failure.
    Returns {module path: why} for the modules with a kernel still compiling
    after deadline_s seconds (a compiler that hangs): their processes are
    killed and the cases report them as errors instead of compiling inline
    and hanging the whole run."""
    import concurrent.futures as cf
    import multiprocessing as mp
    import re
    ctx = mp.get_context("spawn")
    t0 = time.time()
    jobs = []
    for case in cases:
        for target, path in case["modules"].items():
            try:
                src = open(path).read()
            except OSError as e:
                print("prewarm: %s: %s" % (path, e), flush=True)
                continue
            if module_kind(target) == "tilelang":
                jobs += [(_warm_tilelang, path, n) for n in re.findall(r"^def (k\d+_\w+)\(", src, re.M)]
            elif module_kind(target) == "triton":
                n = len(re.findall(r"^@triton.jit", src, re.M))
                jobs += [(_warm_triton, path, i) for i in range(n)]
    gpu_workers = min(4, max(1, workers // 4))
    done = {"tilelang": 0, "triton": 0, "torch.compile": 0}
    slow = []
    stuck = {}
    with cf.ProcessPoolExecutor(max(1, workers - gpu_workers), mp_context=ctx) as cpu, \
            cf.ProcessPoolExecutor(gpu_workers, mp_context=ctx) as gpu:
        futs = {gpu.submit(_warm_compile, c, seed, flex): ("torch.compile", c["name"], "") for c in cases}
        futs.update({cpu.submit(f, a, b): ("kernel", a, b) for f, a, b in jobs})
        try:
            for fut in cf.as_completed(futs, timeout=max(1.0, deadline_s - (time.time() - t0))):
                try:
                    got = fut.result()
                    kind, where, name, secs, err = got[:5]
                    if len(got) > 5 and got[5]:
                        INDUCTOR[where] = got[5]
                except Exception as e:  # a worker died
                    print("prewarm: a worker failed: %s" % short(e), flush=True)
                    continue
                done[kind] += 1
                slow.append((secs, kind, os.path.basename(where), name))
                if err:
                    print("prewarm: %s %s %s failed after %.1fs: %s" % (kind, os.path.basename(where), name, secs,
                                                                       err), flush=True)
        except cf.TimeoutError:
            for fut, (kind, where, name) in futs.items():
                if fut.running():
                    why = "%s %s still compiling after %.0fs of prewarm (a compiler hang?)" % (kind, name, deadline_s)
                    print("prewarm: %s: %s" % (os.path.basename(str(where)), why), flush=True)
                    if kind == "kernel":
                        stuck[where] = why
                fut.cancel()
            for pool in (cpu, gpu):  # kill the stuck workers; shutdown would wait for them
                for proc in list(getattr(pool, "_processes", {}).values()):
                    proc.kill()
    slow.sort(reverse=True)
    print("prewarm: %s in %.1fs; slowest: %s" % (
        ", ".join("%d %s" % (v, k) for k, v in done.items()), time.time() - t0,
        "; ".join("%s %s %s %.1fs" % (k, w, n, s) for s, k, w, n in slow[:4])), flush=True)
    return stuck


# ---------------------------------------------------------------------------
# output

def save_json(path, meta, rows, summary=None):
    """Write the run's JSON (after every case, and once more at the end)."""
    data = {"meta": meta, "rows": rows}
    if summary is not None:
        data["summary"] = summary
    with open(path, "w") as f:
        json.dump(data, f, indent=1)






def best_of(res, names):
    """(min usable ms over names, which), or (None, None)."""
    got = [(usable_ms(res.get(n)), n) for n in names]
    got = [g for g in got if g[0] is not None]
    return min(got) if got else (None, None)


def summarize(rows):
    """Geometric means over the cases of torch.compile's time over each of
    ours (every module variant, the better of tilelang/triton, the better
    naive), counting a case only where both were timed, ours correct and
    torch.compile really compiled."""
    ratios = {}
    for r in rows:
        res = r.get("results", {})
        base = usable_ms(res.get("torch.compile"))
        if base is None:
            continue
        cand = {k: usable_ms(v) for k, v in res.items() if module_kind(k)}
        cand["best of tilelang/triton"] = best_of(res, ("tilelang", "triton"))[0]
        if any(k.endswith("-naive") for k in res):
            cand["best naive"] = best_of(res, ("tilelang-naive", "triton-naive"))[0]
        for lib in [row_library(r), "flex_attention", "torch.compile max-autotune"]:
            if lib and lib in res and lib not in NOT_THE_SAME:
                cand[lib] = usable_ms(res[lib])
        for k, ms in cand.items():
            if ms:
                ratios.setdefault(k, []).append(base / ms)
    return {k: {"geomean": math.exp(sum(math.log(x) for x in v) / len(v)), "cases": len(v)}
            for k, v in ratios.items()}


def fmt_ms(ms):
    """Milliseconds with three or four decimals, or two digits when tiny."""
    return ("%.3f" if ms >= 0.1 else "%.4f" if ms >= 0.001 else "%.2g") % ms


def fmt_frac(f):
    """A floor fraction as a percentage, two digits below 10%."""
    return ("%.0f" if f >= 0.1 else "%.2g") % (100 * f)


def summary_order(k):
    """Ours first (the better target, then each), variants, then peers."""
    ours = ("best of tilelang/triton", "tilelang", "triton")
    if k in ours:
        return (0, ours.index(k), k)
    return (1 if module_kind(k) or k == "best naive" else 2, 0, k)


def print_table(rows, meta=None):
    """The markdown table: per case its floor, then per contender ms
    [floor fraction] (rel err), and torch.compile's time over our better
    target; then the geometric means.  Handles older JSON (fields absent)."""
    meta = meta or {}
    names = []
    for r in rows:
        for k in r.get("results", {}):
            col = "library" if k == row_library(r) else k
            if col not in names:
                names.append(col)
    fixed = ["eager", "torch.compile", "torch.compile max-autotune", "library", "flex_attention", "tilelang", "triton"]
    cols = [c for c in fixed if c in names] + [c for c in names if c not in fixed]
    if meta.get("l2"):
        print("\nL2: %s" % meta["l2"])
    if meta.get("peaks"):
        p = meta["peaks"]
        print("floor rates measured in this run: copy %s GB/s, bf16 matmul %s TFLOP/s" % (
            "%.0f" % p["copy_GBps"] if "copy_GBps" in p else "?",
            "%.0f" % p["bf16_mm_TFLOPs"] if "bf16_mm_TFLOPs" in p else "?"))
    print("\n| case | floor ms | " + " | ".join("%s ms" % c for c in cols) + " | torch.compile ÷ ours |")
    print("|---|---|" + "---|" * len(cols) + "---|")
    for r in rows:
        res = r.get("results", {})
        lib = row_library(r)

        def cell(c):
            k = lib if c == "library" else c
            if not k or k not in res:
                return "–"
            x = res[k]
            s = (k + " ") if c == "library" else ""
            if "error" in x:
                return s + "error"
            if x.get("ms"):
                s += fmt_ms(x["ms"])
                if x.get("graph") is False:
                    s += "*"
                if x.get("floor_frac"):
                    s += " [%s%%]" % fmt_frac(x["floor_frac"])
            else:
                s += "–"
            if "rel_err" in x and (module_kind(k) or k in ("eager", "flex_attention")):
                s += " (%.1e%s)" % (x["rel_err"], "" if x.get("ok", True) else " FAIL")
            elif x.get("ok") is False:
                s += " FAIL"
            if x.get("fallback"):
                s += " EAGER FALLBACK"
            return s
        base = usable_ms(res.get("torch.compile"))
        best, _ = best_of(res, ("tilelang", "triton"))
        speed = "%.2f×" % (base / best) if base and best else "–"
        floor = fmt_ms(r["floor_ms"]) if r.get("floor_ms") else "–"
        if r.get("error"):
            print("| %s | %s | case failed: %s |" % (r.get("case", "?"), floor, r["error"][:120]))
            continue
        print("| %s | %s | %s | %s |" % (r.get("case", "?"), floor, " | ".join(cell(c) for c in cols), speed))
    if any("graph" in x for r in rows for x in r.get("results", {}).values()):
        print("\nms: median of do_bench over CUDA-graph replays; * = plain calls (no CUDA graph: see graph_error "
              "in the JSON); [n%] = the case's floor / this time; (e) = normwise error against the float32 "
              "reference; torch.compile ÷ ours uses the better of tilelang/triton.")
    else:
        print("\nms: median of do_bench over plain calls (this JSON predates CUDA-graph timing); (e) = normwise "
              "error against the float32 reference; torch.compile ÷ ours uses the better of tilelang/triton.")
    summary = summarize(rows)
    if summary:
        print("Geometric means of torch.compile's time over ours: " + "; ".join(
            "%s %.2f× (%d cases)" % (k, v["geomean"], v["cases"])
            for k, v in sorted(summary.items(), key=lambda kv: summary_order(kv[0]))))
    return summary


def print_launch_table(rows):
    """--count-launches: per case, the kernels one call launched (measured)
    for ours, the naive lowering, torch.compile and eager; the bytes of the
    distinct tensors each of our kernels reads and writes, summed over the
    kernels (the plan's footprint, from explain), and Inductor's estimate of
    the same for the kernels it generated."""
    def launched(res, k):
        x = res.get(k) or {}
        return str(x["launches"]["kernels"]) if "launches" in x else "error" if "error" in x or "launches_error" in x \
            else "–"

    def mb(b):
        return "%.1f" % (b / 1e6) if b is not None else "–"
    print("\n| case | ours: kernels launched (TileLang / Triton), planned | ours: MB | naive: kernels, MB "
          "| torch.compile: kernels launched (Inductor's own) | torch.compile: Inductor's MB | eager: kernels |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        res, plans = r.get("results", {}), r.get("plans", {})
        ours, naive = plans.get("tilelang") or plans.get("triton") or {}, plans.get("tilelang-naive") or {}
        ind = (res.get("torch.compile") or {}).get("inductor") or {}
        print("| %s | %s / %s, %s | %s | %s / %s, %s, %s | %s (%s) | %s | %s |" % (
            r.get("case", "?"), launched(res, "tilelang"), launched(res, "triton"), ours.get("kernels", "–"),
            mb(ours.get("footprint_bytes")), launched(res, "tilelang-naive"), launched(res, "triton-naive"),
            naive.get("kernels", "–"), mb(naive.get("footprint_bytes")), launched(res, "torch.compile"),
            ind.get("generated_kernels", "–"), mb(ind.get("bytes")), launched(res, "eager")))
    print("\nkernels launched: CUDA kernels in one call, torch.profiler (copies and memsets apart); planned: the "
          "kernels of the plan (explain); MB: the distinct tensors each kernel reads and writes, summed over its "
          "kernels (ours: explain's footprint; torch.compile: Inductor's num_bytes_accessed, which leaves out "
          "extern calls such as cuBLAS products).")


# ---------------------------------------------------------------------------
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
    """On the CPU: the harness's textbook PyTorch, its library kernels and its
    flex_attention masks agree with tilesmith's graph (evaluated in PyTorch)
    on small instances, so the GPU run checks the emitted kernels against the
    right functions; every textbook fits its own entry and a textbook does
    not fit an entry with other parameters or another function; the matmul
    flop count is right; and the inputs it makes are what each emitted run()
    takes (run() refuses them only for being on the CPU: its device check
    comes after all others)."""
    import subprocess
    import tempfile
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        passed += bool(ok)
        failed += not ok
        print("%s %s" % ("ok  " if ok else "FAIL", what))

    torch.manual_seed(0)
    tmp = tempfile.TemporaryDirectory(prefix="harness-selftest-")
    graphs = {}
    for path, name, sizes, kw in SELF_TEST:
        g = json.loads(subprocess.run([tool, "graph", path, "--entry", name, "--size", sizes, "--format", "json"],
                                      check=True, capture_output=True, text=True).stdout)
        graphs[name] = g
        args = make_inputs(g, torch.float64, device="cpu")
        want = graph_fn(g)(*args).double()
        checks = [("textbook", TEXTBOOK[name](*args, **kw))]
        if name in LIBRARY and LIBRARY[name][0] not in NOT_THE_SAME:
            checks.append((LIBRARY[name][0], LIBRARY[name][1](*args)))
        if flex_mods(name) is not None:
            try:
                with warnings.catch_warnings():  # eager flex_attention warns that it is slow
                    warnings.simplefilter("ignore")
                    checks.append(("flex", make_flex(name, args, compiled=False, window=kw.get("window"))()))
            except Exception as e:
                print("skip %-24s flex_attention unavailable here: %s" % (name, short(e)))
        for what, got in checks:
            err = rel_err(got.double(), want)[0]
            report(err < 1e-5, "%-24s %-8s vs graph: rel %.1e" % (name, what, err))
        fit, why = fit_textbook(name, g)
        report(fit is TEXTBOOK[name] and not why, "%-24s the textbook fits its entry%s" % (name, ": " + why if why else ""))
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
        report(not why, "%-24s inputs are what run() takes%s" % (name, ": " + why if why else ""))
    tmp.cleanup()
    # defect (b): an entry named like an example but with other parameters
    g = json.loads(json.dumps(graphs["gqaDecode"]))
    nid = max(n["id"] for n in g["nodes"]) + 1
    for k, nm in enumerate(("gain1", "gain2")):
        g["nodes"].insert(0, {"id": nid + k, "op": "input", "kind": "real", "shape": [4], "in": [], "name": nm})
        g["inputs"].append({"name": nm, "role": "param", "node": nid + k})
    fit, why = fit_textbook("gqaDecode", g)
    report(fit is None and "takes 3 tensors, the entry 5" in why, "gqaDecode with two gains: no textbook (%s)" % why)
    fit, why = fit_textbook("rowSoftmax", graphs["matmulLargeK"])
    report(fit is None and why, "rowSoftmax textbook on a matmul entry: no textbook (%s)" % why)
    args = make_inputs(graphs["causalAttention"], torch.float32, device="cpu")
    _, _, err, why = textbook_agrees(attention, graph_fn(graphs["causalAttention"]), args)
    report(bool(why), "attention textbook on the causal entry: disagrees (rel %.2g)" % err)
    _, _, err, why = textbook_agrees(causal_attention, graph_fn(graphs["causalAttention"]), args)
    report(not why, "causal textbook on the causal entry: agrees (rel %.2g)" % err)
    # the floor's flop count: attention B=2,H=2,N=8,D=4 is two products of 2*B*H*N*N*D
    flops, ins, out = graph_cost(graphs["attention"])
    report(flops == 2 * (2 * 2 * 2 * 8 * 8 * 4) and ins == [128, 128, 128] and out == 128,
           "attention flops %d, input elements %s, output %d" % (flops, ins, out))
    flops, _, _ = graph_cost(graphs["swigluMlp"])
    report(flops == 2 * 4 * 8 * 12 * 3, "swigluMlp flops %d" % flops)
    # one 64x64 tile of a 2048x2048 bfloat16 output half again too large: the normwise error
    # stays under the tolerance, the element-wise bound catches it
    ref = torch.randn(2048, 2048, dtype=torch.float32)
    out = ref.to(torch.bfloat16).float()
    bad, _ = elementwise_bad(out, ref, 0.02, 0.02)
    report(bad == 0 and rel_err(out, ref)[0] <= TOL["bf16"], "bfloat16 rounding: within both bounds")
    out[64:128, 192:256] *= 1.5
    bad, worst = elementwise_bad(out, ref, 0.02, 0.02)
    report(rel_err(out, ref)[0] <= TOL["bf16"] and bad > 1000,
           "one tile 1.5x too large: normwise %.1e passes, %d elements beyond the element-wise bound" % (rel_err(out, ref)[0], bad))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    """The command line: --self-test, --table, or a run over a manifest."""
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        sys.exit(self_test(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        data = json.load(open(sys.argv[2]))
        if any("launches" in x for r in data["rows"] for x in r.get("results", {}).values()):
            print_launch_table(data["rows"])
        else:
            print_table(data["rows"], data.get("meta"))
        sys.exit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="gpu_results.json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget-ms", type=float, default=600, help="timing budget per contender")
    ap.add_argument("--launch-budget-ms", type=float, default=50,
                    help="budget for the plain-call timing beside a graph replay's (0: skip it)")
    ap.add_argument("--graph", action=argparse.BooleanOptionalAction, default=True,
                    help="time CUDA-graph replays (--no-graph: plain calls only)")
    ap.add_argument("--flex", action=argparse.BooleanOptionalAction, default=True,
                    help="time flex_attention on the masked attention cases")
    ap.add_argument("--max-autotune", action="store_true",
                    help="also time torch.compile(mode='max-autotune-no-cudagraphs') (slow to compile)")
    ap.add_argument("--prewarm", type=int, default=os.cpu_count() or 1,
                    help="processes that compile every kernel ahead (0: compile inline)")
    ap.add_argument("--prewarm-deadline", type=float, default=300.0,
                    help="seconds the prewarm may take; a module whose kernel still compiles then is reported as "
                         "an error, not compiled inline")
    ap.add_argument("--count-launches", action="store_true",
                    help="count the kernels one call of each contender launches (torch.profiler) instead of "
                         "timing, and print kernels and bytes beside the naive lowering's and torch.compile's")
    ap.add_argument("--ncu-marks", action="store_true",
                    help="run one call of each contender between cudaProfilerStart/Stop after a marker kernel, "
                         "for `ncu --profile-from-start off` (bench/gpu_session.sh bytes), instead of timing")
    ap.add_argument("--check-graph", action="store_true",
                    help="(always done now: the textbook is checked against tilesmith's graph)")
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.dir, "manifest.json")))
    only = set(x for x in args.only.split(",") if x)
    rows = []
    meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "torch": torch.__version__,
            "device": torch.cuda.get_device_name(), "cuda": torch.version.cuda,
            "timing": "median of triton.testing.do_bench over CUDA-graph replays (per contender \"graph\"; "
                      "plain calls where capture failed)" if args.graph else "median of triton.testing.do_bench "
                      "over plain calls (--no-graph)",
            "budget_ms": args.budget_ms, "launch_budget_ms": args.launch_budget_ms,
            "flex": args.flex, "max_autotune": args.max_autotune, "floor_note": FLOOR_NOTE,
            "references": "float32, TF32 off; the textbook where it fits the entry, else the graph JSON"}
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
    meta["l2"] = l2_note()
    print(json.dumps(meta))
    dynamo_setup()
    failures = 0
    cases = [c for c in manifest["cases"] if not only or c["name"] in only]
    for case in cases:
        case["graph"] = os.path.join(args.dir, case["graph"])
        case["modules"] = {t: os.path.join(args.dir, p) for t, p in case["modules"].items()}
    if args.prewarm > 0:
        try:
            STUCK.update(prewarm(cases, args.prewarm, args.seed, args.flex, args.prewarm_deadline))
        except Exception:
            print("prewarm failed (kernels compile inline): %s" % traceback.format_exc()[-1500:], flush=True)
    t0 = time.time()
    try:
        peaks = measure_peaks()
    except Exception as e:
        peaks = {"error": short(e)}
    meta["peaks"] = peaks
    print("floor rates: %s (%.1fs); L2: %s" % (json.dumps(peaks), time.time() - t0, meta["l2"]), flush=True)
    for case in cases:
        t0 = time.time()
        try:
            row = run_case(case, args, rows, peaks)
        except Exception as e:
            if rows and rows[-1].get("case") == case["name"]:
                rows[-1]["error"] = short(e)
            else:
                rows.append({"case": case["name"], "results": {}, "error": short(e)})
            print("case %s failed: %s" % (case["name"], traceback.format_exc()[-1500:]))
            failures += 1
            save_json(args.json, meta, rows)
            continue
        opt = set(row.get("optional", []))
        bad = [t for t, x in row["results"].items()
               if t not in opt and (x.get("ok") is False or "error" in x)]
        warn = [t for t, x in row["results"].items() if t in opt and (x.get("ok") is False or "error" in x)]
        failures += bool(bad)
        nograph = [t for t, x in row["results"].items() if x.get("graph") is False and "ms" in x]
        print("%-32s %5.1fs %s%s%s" % (case["name"], time.time() - t0, "FAIL " + ",".join(bad) if bad else "ok",
                                       "; optional failed: " + ",".join(warn) if warn else "",
                                       "; no CUDA graph: " + ",".join(nograph) if nograph else ""), flush=True)
        for t in bad + warn:
            x = row["results"][t]
            print("    %s: %s" % (t, x.get("error") or "rel err %.3g %s" % (x["rel_err"], x.get("why", ""))),
                  flush=True)
        for t in nograph:
            print("    %s timed without a CUDA graph: %s" % (t, row["results"][t].get("graph_error", "")), flush=True)
        try:
            torch.cuda.empty_cache()
        except Exception:
            pass
        save_json(args.json, meta, rows)  # after every case: a cut-off run keeps what it measured
    summary = None
    if args.ncu_marks:
        save_json(args.json, meta, rows)
        print("\n%d cases, %d with a failure; %d contenders profiled" % (len(rows), failures, len(NCU_MARKS)))
        sys.exit(1 if failures else 0)
    if args.count_launches:
        try:
            print_launch_table(rows)
        except Exception:
            print("launch table failed: %s" % traceback.format_exc()[-1500:])
        save_json(args.json, meta, rows)
        print("\n%d cases, %d with a failure" % (len(rows), failures))
        sys.exit(1 if failures else 0)
    try:
        summary = print_table(rows, meta)
    except Exception:
        print("table failed: %s" % traceback.format_exc()[-1500:])
    save_json(args.json, meta, rows, summary)
    print("\n%d cases, %d with a failure" % (len(rows), failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
