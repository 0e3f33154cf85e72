#!/usr/bin/env python3
"""NumPy cross-check of tilesmith's front end and graph interpreter.

usage: python3 tests/crosscheck.py ./tilesmith [-k FILTER] [--keep] [--seed S]
       python3 tests/crosscheck.py --self-test

For every definition in tests/prims.lean, and for the generic definition of
every example in examples/ at small sizes (the table EXAMPLES below), this
script

  1. runs `tilesmith graph FILE --entry NAME --size ... --format json`;
  2. draws random inputs (float64 normal for real inputs; for Index inputs,
     integers in [0, bound) where bound is the size of the axis the input is
     gathered along) and writes them as .npy files;
  3. runs `tilesmith eval ... --in NAME=PATH.npy ... --out OUT.npy`;
  4. evaluates the JSON graph node by node with its own NumPy implementation
     of every op, checking each node's declared shape on the way, and
     compares it with the interpreter's output;
  5. where a hand-written NumPy reference of the program exists (every
     example and most prims), compares the output with it as well: this
     checks the front end's semantics (what the program means), not only the
     interpreter.

Comparisons are normwise: max|a-b| / max(max|b|, 1e-300) < 1e-12 over the
finite entries, with NaN and ±inf at identical positions.

The concrete instances of the examples (e.g. `attention_4k`) are too large to
evaluate; each is elaborated with `tilesmith graph` and its node shapes are
checked against NumPy's shape rules.

One line per check ("ok  FILE:ENTRY  what  rel=..." or "FAIL ..."), then
"N passed, M failed"; the exit status is 1 if anything failed.  A missing
binary or a tilesmith error is a failure, shown with its stderr.  With
--self-test, only the checker itself is tested, on hand-made graphs.  Only
NumPy and the standard library are used.
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRIMS = os.path.join("tests", "prims.lean")
TOL = 1e-12
TIMEOUT = 300


# ---------------------------------------------------------------------------
# Running the tool
# ---------------------------------------------------------------------------

class ToolError(Exception):
    """tilesmith failed: the message holds the command and its stderr."""


def run_tool(tool, args):
    """Run tilesmith with args; return stdout or raise ToolError."""
    cmd = [tool] + args
    try:
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    except FileNotFoundError:
        raise ToolError("cannot run %s: no such file" % tool)
    except PermissionError:
        raise ToolError("cannot run %s: not executable" % tool)
    except subprocess.TimeoutExpired:
        raise ToolError("%s: timed out after %d s" % (" ".join(cmd), TIMEOUT))
    if p.returncode != 0:
        err = (p.stderr.strip() or p.stdout.strip() or "(no output)")
        raise ToolError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, err))
    return p.stdout


def size_args(sizes):
    """--size A=1,B=2 (nothing when there are no sizes)."""
    if not sizes:
        return []
    return ["--size", ",".join("%s=%d" % kv for kv in sizes.items())]


def get_graph(tool, path, entry, sizes):
    """The entry's graph as parsed JSON."""
    out = run_tool(tool, ["graph", path, "--entry", entry] + size_args(sizes) + ["--format", "json"])
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        raise ToolError("graph --format json printed invalid JSON (%s):\n%s" % (e, out[:2000]))


def run_eval(tool, path, entry, sizes, files, out):
    """Run the interpreter with the given input files; return its output array."""
    args = ["eval", path, "--entry", entry] + size_args(sizes)
    for name, f in files.items():
        args += ["--in", "%s=%s" % (name, f)]
    run_tool(tool, args + ["--out", out])
    return np.load(out)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

LAYOUT_OPS = ("reshape", "permute", "slice", "concat")


def index_bounds(graph):
    """For each input, the smallest size of an axis it is gathered along.

    The index operand of each gather is traced back through layout ops
    (reshape, permute, slice, concat) to the inputs it comes from."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    bounds = {}
    for n in graph["nodes"]:
        if n["op"] != "gather":
            continue
        x, idx = nodes[n["in"][0]], nodes[n["in"][1]]
        bound = x["shape"][n["axis"]]
        stack, seen = [idx["id"]], set()
        while stack:
            m = nodes[stack.pop()]
            if m["id"] in seen:
                continue
            seen.add(m["id"])
            if m["op"] == "input":
                bounds[m["name"]] = min(bounds.get(m["name"], bound), bound)
            elif m["op"] in LAYOUT_OPS:
                stack.extend(m["in"])
    return bounds


def make_inputs(graph, rng, positive=(), index_bound=None):
    """Random inputs by name: normal reals (|normal| + 0.5 for the names in
    `positive`), integers in [0, bound) for Index inputs: the bound tilesmith's
    graph JSON carries, or index_bounds' for a graph written here by hand."""
    nodes = {n["id"]: n for n in graph["nodes"]}
    bounds = index_bounds(graph)
    vals = {}
    for inp in graph["inputs"]:
        node = nodes[inp["node"]]
        shape = tuple(node["shape"])
        name = inp["name"]
        if inp["role"] == "index" or node["kind"] == "int":
            hi = inp["bound"] if "bound" in inp else bounds.get(name, index_bound or 2)
            vals[name] = rng.integers(0, hi, size=shape, dtype=np.int64)
        elif name in positive:
            vals[name] = np.abs(rng.standard_normal(shape)) + 0.5
        else:
            vals[name] = rng.standard_normal(shape)
    return vals


def write_inputs(vals, tmp):
    """Write each input as NAME.npy in tmp; return name -> path."""
    files = {}
    for name, v in vals.items():
        f = os.path.join(tmp, "in_%s.npy" % re.sub(r"[^A-Za-z0-9_]", "_", name))
        np.save(f, v)
        files[name] = f
    return files


# ---------------------------------------------------------------------------
# The graph evaluator: every op of ops.def in NumPy
# ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def const_value(v):
    """A const node's value: a number or "inf" / "-inf" / "nan"."""
    if isinstance(v, str):
        return float(v)  # float() reads "inf", "-inf", "nan"
    return float(v)


def gather(x, idx, axis, out_shape):
    """np.take_along_axis with the non-axis dims of x and idx broadcast."""
    idx = np.asarray(idx)
    if np.any(idx != np.round(idx)):
        raise ValueError("gather: non-integer index")
    idx = idx.astype(np.int64)
    rank = len(out_shape)
    x = x.reshape((1,) * (rank - x.ndim) + x.shape)
    idx = idx.reshape((1,) * (rank - idx.ndim) + idx.shape)
    if idx.size and (idx.min() < 0 or idx.max() >= x.shape[axis]):
        raise ValueError("gather: index out of range [0, %d)" % x.shape[axis])
    xs = list(out_shape)
    xs[axis] = x.shape[axis]
    x = np.broadcast_to(x, xs)
    idx = np.broadcast_to(idx, out_shape)
    return np.take_along_axis(x, idx, axis=axis)


def sigmoid(x):
    """1 / (1 + exp(-x)), without overflow warnings."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


UNARY = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh,
    "erf": _erf,
    "sigmoid": sigmoid,
    "relu": lambda x: np.maximum(x, 0.0),  # NaN propagates, as in PyTorch
    "abs": np.abs,
    "cast": lambda x: x.astype(np.float64),
}

def idiv_euclid(a, b):
    """Lean's Int division: Euclidean (0 <= a - q b < |b|), a / 0 = 0."""
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    q = np.where((safe < 0) & (a - q * safe != 0), q + 1, q)
    return np.where(b == 0, 0, q)


BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "pow": np.power,
    "max": np.maximum,  # NaN propagates, as in PyTorch
    "min": np.minimum,
    "idiv": idiv_euclid,
}

COMPARE = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}

REDUCE = {"sum": np.sum, "amax": np.max, "amin": np.min}


def eval_node(n, args, inputs):
    """The value of node n given the values of its operands."""
    op = n["op"]
    if op == "input":
        return np.asarray(inputs[n["name"]], dtype=np.float64)
    if op == "const":
        return np.array(const_value(n["value"]))
    if op == "iota":
        return np.arange(n["shape"][0], dtype=np.float64)
    if op in UNARY:
        return UNARY[op](args[0])
    if op in BINARY:
        return BINARY[op](args[0], args[1])
    if op in COMPARE:
        return COMPARE[op](args[0], args[1]).astype(np.float64)
    if op == "select":
        return np.where(args[0] != 0, args[1], args[2])
    if op in REDUCE:
        return REDUCE[op](args[0], axis=n["axis"], keepdims=True)
    if op == "matmul":
        return np.matmul(args[0], args[1])
    if op == "permute":
        return np.transpose(args[0], n["perm"])
    if op == "reshape":
        return args[0].reshape(n["shape"])
    if op == "slice":
        sl = [slice(None)] * args[0].ndim
        sl[n["axis"]] = slice(n["lo"], n["hi"])
        return args[0][tuple(sl)]
    if op == "concat":
        return np.concatenate(args, axis=n["axis"])
    if op == "gather":
        return gather(args[0], args[1], n["axis"], tuple(n["shape"]))
    raise ValueError("unknown op '%s'" % op)


def eval_graph(graph, inputs):
    """Evaluate the graph in float64; check each node's shape as we go."""
    vals = {}
    with np.errstate(all="ignore"):
        for n in graph["nodes"]:
            args = [vals[i] for i in n["in"]]
            v = np.asarray(eval_node(n, args, inputs), dtype=np.float64)
            if list(v.shape) != list(n["shape"]):
                raise ValueError("node %d (%s at %s): NumPy gives shape %s, the graph says %s"
                                 % (n["id"], n["op"], n.get("pos"), list(v.shape), n["shape"]))
            vals[n["id"]] = v
    return vals[graph["output"]]


# ---------------------------------------------------------------------------
# Shape rules alone (for the full-size instances)
# ---------------------------------------------------------------------------

def bshape(*shapes):
    """NumPy broadcasting of shapes, or ValueError."""
    return list(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def infer_shape(n, ins):
    """The shape NumPy's rules give node n from its operands' shapes."""
    op = n["op"]
    if op in ("input", "const", "iota"):
        return n["shape"]
    if op in UNARY:
        return ins[0]
    if op in BINARY or op in COMPARE:
        return bshape(ins[0], ins[1])
    if op == "select":
        return bshape(ins[0], ins[1], ins[2])
    if op in REDUCE:
        s = list(ins[0])
        s[n["axis"]] = 1
        return s
    if op == "matmul":
        a, b = ins
        if a[-1] != b[-2]:
            raise ValueError("matmul: %s by %s" % (a, b))
        return bshape(a[:-2], b[:-2]) + [a[-2], b[-1]]
    if op == "permute":
        if sorted(n["perm"]) != list(range(len(ins[0]))):
            raise ValueError("permute: %s is not a permutation" % n["perm"])
        return [ins[0][p] for p in n["perm"]]
    if op == "reshape":
        if math.prod(n["shape"]) != math.prod(ins[0]):
            raise ValueError("reshape: %s to %s" % (ins[0], n["shape"]))
        return n["shape"]
    if op == "slice":
        s = list(ins[0])
        if not 0 <= n["lo"] <= n["hi"] <= s[n["axis"]]:
            raise ValueError("slice [%d, %d) of %d" % (n["lo"], n["hi"], s[n["axis"]]))
        s[n["axis"]] = n["hi"] - n["lo"]
        return s
    if op == "concat":
        ax = n["axis"]
        s = list(ins[0])
        for t in ins[1:]:
            if len(t) != len(s) or any(t[i] != s[i] for i in range(len(s)) if i != ax):
                raise ValueError("concat: %s" % ins)
        s[ax] = sum(t[ax] for t in ins)
        return s
    if op == "gather":
        x, i = list(ins[0]), list(ins[1])
        ax = n["axis"]
        r = max(len(x), len(i))
        x = [1] * (r - len(x)) + x
        i = [1] * (r - len(i)) + i
        xo = [d for k, d in enumerate(x) if k != ax]
        io = [d for k, d in enumerate(i) if k != ax]
        s = bshape(xo, io)
        return s[:ax] + [i[ax]] + s[ax:]
    raise ValueError("unknown op '%s'" % op)


def check_shapes(graph):
    """Check every node's declared shape against the shape rules; also that
    operands come before their users."""
    shapes = {}
    for n in graph["nodes"]:
        for i in n["in"]:
            if i not in shapes:
                raise ValueError("node %d uses %d before it is defined" % (n["id"], i))
        want = infer_shape(n, [shapes[i] for i in n["in"]])
        if list(want) != list(n["shape"]):
            raise ValueError("node %d (%s at %s): the rules give %s, the graph says %s"
                             % (n["id"], n["op"], n.get("pos"), list(want), n["shape"]))
        shapes[n["id"]] = n["shape"]
    if graph["output"] not in shapes:
        raise ValueError("the output %s is not a node" % graph["output"])


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------

def compare(got, want):
    """(ok, relative error, message): normwise over the finite entries, with
    NaN and ±inf at identical positions."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False, float("inf"), "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return False, float("inf"), "NaN positions differ (%d vs %d NaNs)" % (
            np.isnan(got).sum(), np.isnan(want).sum())
    for sign in (1, -1):
        if not np.array_equal(got == sign * np.inf, want == sign * np.inf):
            return False, float("inf"), "%sinf positions differ" % ("+" if sign > 0 else "-")
    fin = np.isfinite(want)
    if not fin.any():
        return True, 0.0, ""
    err = np.max(np.abs(got[fin] - want[fin]))
    rel = err / max(np.max(np.abs(want[fin])), 1e-300)
    if not rel < TOL:
        return False, rel, "relative error %.3g above %.0e" % (rel, TOL)
    return True, rel, ""


# ---------------------------------------------------------------------------
# Hand-written references, straight from the math
# ---------------------------------------------------------------------------

def np_softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def np_rmsnorm(x, w, eps=1e-6):
    return x / np.sqrt(np.mean(x ** 2, axis=-1, keepdims=True) + eps) * w


def np_layernorm(x, w, b, eps=1e-5):
    m = np.mean(x, axis=-1, keepdims=True)
    v = np.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def np_silu(x):
    return x / (1.0 + np.exp(-x))


def np_gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def np_gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def np_cross_entropy(logits, targets):
    """Mean over rows of logsumexp(row) - row[target], as shape [1, 1]."""
    lse = np_logsumexp(logits)[:, 0]
    picked = logits[np.arange(len(targets)), targets]
    return np.array([[np.mean(lse - picked)]])


def np_causal(s):
    """-inf above the diagonal of the last two dims (keep j <= i)."""
    n, m = s.shape[-2:]
    keep = np.tril(np.ones((n, m), dtype=bool))
    return np.where(keep, s, -np.inf)


def np_attention(q, k, v, causal=False):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = np_causal(s)
    return np_softmax(s) @ v


def ref_softcap_window(a, z):
    q, k, v = a["q"], a["k"], a["v"]
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(z["D"])
    s = 50.0 * np.tanh(s / 50.0)
    i = np.arange(z["N"])[:, None]
    j = np.arange(z["N"])[None, :]
    s = np.where((j <= i) & (i - j < z["W"]), s, -np.inf)
    return np_softmax(s) @ v


def ref_gqa(a, z):
    """Repeat each kv head H/Hkv times (repeat_interleave), then attention."""
    q, k, v = a["q"], a["k"], a["v"]
    g = z["H"] // z["Hkv"]
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    s = np.einsum("bhd,bhsd->bhs", q, k) / math.sqrt(z["D"])
    return np.einsum("bhs,bhsd->bhd", np_softmax(s), v)


def np_block(x, g1, Wq, Wk, Wv, Wo, g2, Wg, Wu, Wd, H):
    """Pre-norm causal multi-head attention + SwiGLU, heads by slicing."""
    B, N, D = x.shape
    dh = D // H
    h = np_rmsnorm(x, g1)
    q, k, v = h @ Wq, h @ Wk, h @ Wv
    heads = []
    for j in range(H):
        sl = slice(j * dh, (j + 1) * dh)
        heads.append(np_attention(q[..., sl], k[..., sl], v[..., sl], causal=True))
    x = x + np.concatenate(heads, axis=-1) @ Wo
    h = np_rmsnorm(x, g2)
    return x + (np_silu(h @ Wg) * (h @ Wu)) @ Wd


def ref_block(a, z):
    return np_block(a["x"], a["g1"], a["Wq"], a["Wk"], a["Wv"], a["Wo"], a["g2"],
                    a["Wg"], a["Wu"], a["Wd"], z["H"])


def np_mlp(a, z):
    h = np.maximum(a["x"] @ a["Win"], 0.0)
    for l in range(z["L"]):
        h = h + np.maximum(np_rmsnorm(h, a["G"][l]) @ a["W"][l], 0.0)
    return h @ a["Wout"]


def np_lm(a, z):
    B, N, D = z["B"], z["N"], z["D"]
    x = a["E"][a["ids"]]                       # [B, N, D]
    for l in range(z["L"]):
        x = np_block(x, a["G1"][l], a["Wq"][l], a["Wk"][l], a["Wv"][l], a["Wo"][l],
                     a["G2"][l], a["Wg"][l], a["Wu"][l], a["Wd"][l], z["H"])
    assert x.shape == (B, N, D)
    return np_rmsnorm(x, a["Gf"]) @ a["Wout"]


def ref_lm_loss(a, z):
    logits = np_lm(a, z)
    V = logits.shape[-1]
    return np_cross_entropy(logits.reshape(-1, V), a["targets"].reshape(-1))


# References of prims.lean, by definition name: f(inputs) -> array.
PRIM_REFS = {
    "prim_exp": lambda a: np.exp(a["x"]),
    "prim_log": lambda a: np.log(a["p"]),
    "prim_log_nan": lambda a: np.log(a["x"] - 1),
    "prim_sqrt": lambda a: np.sqrt(a["p"]),
    "prim_rsqrt": lambda a: 1 / np.sqrt(a["p"]),
    "prim_tanh": lambda a: np.tanh(a["x"]),
    "prim_erf": lambda a: _erf(a["x"]),
    "prim_sigmoid": lambda a: sigmoid(a["x"] * 40),
    "prim_relu": lambda a: np.maximum(a["x"], 0),
    "prim_abs": lambda a: np.abs(a["x"]),
    "prim_neg": lambda a: -a["x"],
    "prim_cast_mask": lambda a: (a["x"] > 0).astype(float),
    "prim_cast_index": lambda a: a["i"].astype(float),
    "prim_add_row": lambda a: a["x"] + a["b"],
    "prim_add_outer": lambda a: a["a"] + a["b"],
    "prim_sub_mid": lambda a: a["x"] - a["y"],
    "prim_mul_nat": lambda a: a["x"] * 3,
    "prim_mul_float": lambda a: 0.25 * a["x"],
    "prim_div_sqrt": lambda a: a["x"] / 4,
    "prim_div_scalar": lambda a: 1 / a["x"],
    "prim_div": lambda a: a["x"] / a["y"],
    "prim_pow_nat": lambda a: a["x"] ** 3,
    "prim_pow": lambda a: a["p"] ** a["y"],
    "prim_max": lambda a: np.maximum(a["a"], a["b"]),
    "prim_min": lambda a: np.minimum(a["a"], 0.5),
    "prim_const_fold": lambda a: a["x"] * 14 / 0.5,
    "prim_lt": lambda a: (a["a"] < a["b"]).astype(float),
    "prim_le": lambda a: np.tril(np.ones((3, 4))),
    "prim_gt": lambda a: (a["a"] > 0).astype(float),
    "prim_ge": lambda a: (a["a"] >= a["b"]).astype(float),
    "prim_eq": lambda a: (a["i"][None, :] == np.arange(3)[:, None]).astype(float),
    "prim_ne": lambda a: (a["i"] != a["j"]).astype(float),
    "prim_idiv_nat": lambda a: idiv_euclid(np.arange(7.0)[:, None] - 3, 2),
    "prim_idiv": lambda a: idiv_euclid(a["i"] - 2, a["j"]) + idiv_euclid(a["i"], -a["j"]),
    "prim_select": lambda a: np.where(a["a"] > a["b"], a["a"], a["b"]),
    "prim_select_neginf": lambda a: np.where(a["a"] > 0, a["a"], -np.inf),
    "prim_inf": lambda a: a["a"],
    "prim_nan_max": lambda a: np.maximum(np.log(a["x"]), 0),
    "prim_nan_min": lambda a: np.minimum(np.log(a["x"]), 0),
    "prim_nan_relu": lambda a: np.maximum(np.log(a["x"]), 0),
    "prim_nan_amax": lambda a: np.log(a["x"]).max(-1, keepdims=True),
    "prim_nan_amin": lambda a: np.log(a["x"]).min(0, keepdims=True),
    "prim_iota": lambda a: np.arange(5.0),
    "prim_iota_add": lambda a: a["x"] + np.arange(5.0),
    "prim_size": lambda a: a["x"] * 2 + 3 - 4,
    "prim_sum": lambda a: a["x"].sum(-1, keepdims=True),
    "prim_sum_dim0": lambda a: a["x"].sum(0, keepdims=True),
    "prim_amax": lambda a: a["x"].max(-2, keepdims=True),
    "prim_amin": lambda a: a["x"].min(1, keepdims=True),
    "prim_sub_amax": lambda a: a["x"] - a["x"].max(-1, keepdims=True),
    "prim_matmul": lambda a: a["a"] @ a["b"],
    "prim_matmul_batch": lambda a: a["a"] @ a["b"],
    "prim_matmul_bcast": lambda a: np.einsum("bxmk,ykn->bymn", a["a"], a["b"]),
    "prim_transpose": lambda a: np.einsum("bik,bjk->bij", a["a"], a["b"]),
    "prim_transpose_alone": lambda a: np.swapaxes(a["a"], 1, 2),
    "prim_permute": lambda a: np.einsum("abcd->cadb", a["x"]),
    "prim_reshape": lambda a: a["x"].reshape(6, 2, 2),
    "prim_slice": lambda a: a["x"][:, 2:5],
    "prim_slice_dim": lambda a: a["x"][1:3],
    "prim_concat": lambda a: np.vstack([a["a"], a["b"]]),
    "prim_concat_last": lambda a: np.hstack([a["a"], a["b"], a["c"]]),
    "prim_gather_embed": lambda a: a["E"][a["ids"]],
    "prim_gather_pick": lambda a: a["x"][np.arange(4), a["t"]][:, None],
    "prim_gather_full": lambda a: np.array([[a["x"][r, a["i"][r, c]] for c in range(4)]
                                            for r in range(3)]),
    "prim_gather_bcast": lambda a: a["x"][:, a["i"][0]],
    "prim_layers": lambda a: _fold(4, a["x"], lambda l, h: np.tanh(h @ a["W"][l] + a["b"][l])),
    "prim_layers_index": lambda a: _fold(3, a["x"], lambda l, h: h * 0.5 + l),
    "pre_square": lambda a: a["x"] ** 2,
    "pre_reciprocal": lambda a: 1 / a["x"],
    "pre_mean": lambda a: a["x"].mean(-1, keepdims=True),
    "pre_mean_dim": lambda a: a["x"].mean(1, keepdims=True),
    "pre_var": lambda a: a["x"].var(-1, keepdims=True),
    "pre_var_dim": lambda a: a["x"].var(0, keepdims=True),
    "pre_logsumexp": lambda a: np_logsumexp(a["x"] * 300),
    "pre_logsumexp_dim": lambda a: np_logsumexp(a["x"], axis=0),
    "pre_softmax": lambda a: np_softmax(a["x"] * 300),
    "pre_softmax_dim": lambda a: np_softmax(a["x"], axis=-2),
    "pre_logsoftmax": lambda a: a["x"] - np_logsumexp(a["x"]),
    "pre_rmsnorm": lambda a: np_rmsnorm(a["x"], a["w"]),
    "pre_rmsnorm_eps": lambda a: np_rmsnorm(a["x"], a["w"], eps=0.5),
    "pre_layernorm": lambda a: np_layernorm(a["x"], a["w"], a["b"]),
    "pre_silu": lambda a: np_silu(a["x"]),
    "pre_gelu": lambda a: np_gelu(a["x"] * 3),
    "pre_gelu_tanh": lambda a: np_gelu_tanh(a["x"] * 3),
    "pre_softplus": lambda a: np.logaddexp(0, a["x"] * 30),
    "pre_softcap": lambda a: 50 * np.tanh(a["x"] * 100 / 50),
    "pre_causal_mask": lambda a: np_causal(a["x"]),
    "pre_causal_mask_rect": lambda a: np_causal(a["x"]),
    "pre_linear": lambda a: a["x"] @ a["w"],
    "pre_linear_bias": lambda a: a["x"] @ a["w"] + a["b"],
    "pre_swiglu": lambda a: np_silu(a["x"] @ a["wg"]) * (a["x"] @ a["wu"]),
    "pre_embed": lambda a: a["E"][a["ids"]],
    "pre_split_heads": lambda a: a["x"].reshape(2, 3, 4, 2).transpose(0, 2, 1, 3),
    "pre_merge_heads": lambda a: a["x"],
    "pre_cross_entropy": lambda a: np_cross_entropy(a["logits"], a["t"]),
}


def _fold(n, init, f):
    """Nat.fold: f 0, then f 1, ..."""
    h = init
    for l in range(n):
        h = f(l, h)
    return h


# The examples at small sizes: (file, entry, sizes, reference(inputs, sizes)).
EXAMPLES = [
    ("examples/attention.lean", "attention", dict(B=2, H=2, N=8, D=4),
     lambda a, z: np_attention(a["q"], a["k"], a["v"])),
    ("examples/causal_attention.lean", "causalAttention", dict(B=2, H=2, N=8, D=4),
     lambda a, z: np_attention(a["q"], a["k"], a["v"], causal=True)),
    ("examples/softcap_window_attention.lean", "softcapWindowAttention",
     dict(B=2, H=2, N=8, D=4, W=3), ref_softcap_window),
    ("examples/gqa_decode.lean", "gqaDecode", dict(B=2, H=4, Hkv=2, S=8, D=4), ref_gqa),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", dict(M=4, K=8, N=6),
     lambda a, z: np_rmsnorm(a["x"], a["g"]) @ a["W"]),
    ("examples/swiglu_mlp.lean", "swigluMlp", dict(M=4, D=8, F=12),
     lambda a, z: (np_silu(a["x"] @ a["Wg"]) * (a["x"] @ a["Wu"])) @ a["Wd"]),
    ("examples/swiglu_mlp.lean", "gatedMlp", dict(M=2, D=8, F=8),
     lambda a, z: np_silu(a["x"] @ a["Wg"]) * (a["x"] @ a["Wu"])),
    ("examples/matmul_large_k.lean", "matmulLargeK", dict(M=4, K=64, N=4),
     lambda a, z: a["a"] @ a["b"]),
    ("examples/softmax.lean", "rowSoftmax", dict(M=4, N=16),
     lambda a, z: np_softmax(a["x"])),
    ("examples/rmsnorm.lean", "rowRmsnorm", dict(M=4, N=16),
     lambda a, z: np_rmsnorm(a["x"], a["w"])),
    ("examples/layernorm.lean", "rowLayernorm", dict(M=4, N=16),
     lambda a, z: np_layernorm(a["x"], a["w"], a["b"])),
    ("examples/bias_gelu_residual.lean", "biasGeluResidual", dict(M=4, N=16),
     lambda a, z: a["r"] + np_gelu(a["x"] + a["b"])),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", dict(M=6, D=8, V=10),
     lambda a, z: np_cross_entropy(a["h"] @ a["W"], a["targets"])),
    ("examples/transformer_block.lean", "transformerBlock", dict(B=2, N=8, D=16, H=4, F=24),
     ref_block),
    ("examples/mlp_classifier.lean", "residualMlp", dict(B=4, I=6, D=8, L=3, C=5), np_mlp),
    ("examples/mlp_classifier.lean", "residualMlpLoss", dict(B=4, I=6, D=8, L=3, C=5),
     lambda a, z: np_cross_entropy(np_mlp(a, z), a["labels"])),
    ("examples/transformer_lm.lean", "decoderBlock", dict(B=2, N=8, D=16, H=4, F=24), ref_block),
    ("examples/transformer_lm.lean", "transformerLM", dict(B=2, N=8, V=11, D=16, H=2, F=24, L=2),
     np_lm),
    ("examples/transformer_lm.lean", "transformerLMLoss",
     dict(B=2, N=8, V=11, D=16, H=2, F=24, L=2), ref_lm_loss),
]


# ---------------------------------------------------------------------------
# Self-test: the checker's own parts, on hand-made graphs (no tilesmith needed)
# ---------------------------------------------------------------------------

def _node(i, op, shape, ins=(), kind="real", **attrs):
    """A node of the JSON schema of `tilesmith graph --format json`."""
    n = {"id": i, "op": op, "kind": kind, "shape": list(shape), "sym": [None] * len(shape),
         "in": list(ins), "pos": "self:%d:1" % i, "site": "self:%d:1" % i, "via": None}
    n.update(attrs)
    return n


def _inputs(*specs):
    """Input nodes and the graph's "inputs" list from (name, role, shape)."""
    nodes, inputs = [], []
    for i, (name, role, shape) in enumerate(specs):
        kind = "int" if role == "index" else "real"
        nodes.append(_node(i, "input", shape, kind=kind, name=name, role=role))
        inputs.append({"name": name, "role": role, "node": i})
    return nodes, inputs


def _attention_graph(B, H, N, D):
    """softmax(q ⬝ kᵀ / sqrt D) ⬝ v, as the front end emits it."""
    nodes, inputs = _inputs(("q", "tensor", [B, H, N, D]), ("k", "tensor", [B, H, N, D]),
                            ("v", "tensor", [B, H, N, D]))
    nodes += [
        _node(3, "permute", [B, H, D, N], [1], perm=[0, 1, 3, 2]),
        _node(4, "matmul", [B, H, N, N], [0, 3]),
        _node(5, "const", [], value=math.sqrt(D)),
        _node(6, "div", [B, H, N, N], [4, 5]),
        _node(7, "amax", [B, H, N, 1], [6], axis=3),
        _node(8, "sub", [B, H, N, N], [6, 7]),
        _node(9, "exp", [B, H, N, N], [8]),
        _node(10, "sum", [B, H, N, 1], [9], axis=3),
        _node(11, "div", [B, H, N, N], [9, 10]),
        _node(12, "matmul", [B, H, N, D], [11, 2]),
    ]
    return {"entry": "attention", "inputs": inputs, "output": 12, "nodes": nodes}


def _embed_ce_graph(V, D, T):
    """gather-based embedding, a mask from iota, select, concat, slice."""
    nodes, inputs = _inputs(("E", "param", [V, D]), ("ids", "index", [T]))
    nodes += [
        _node(2, "reshape", [T, 1], [1], kind="int"),
        _node(3, "gather", [T, D], [0, 2], axis=0),
        _node(4, "iota", [T], kind="int"),
        _node(5, "reshape", [T, 1], [4], kind="int"),
        _node(6, "iota", [D], kind="int"),
        _node(7, "reshape", [1, D], [6], kind="int"),
        _node(8, "le", [T, D], [7, 5], kind="bool"),
        _node(9, "const", [], value="-inf"),
        _node(10, "select", [T, D], [8, 3, 9]),
        _node(11, "slice", [T, D - 1], [10], axis=1, lo=1, hi=D),
        _node(12, "concat", [T, 2 * D - 1], [10, 11], axis=1),
        _node(13, "cast", [T, D], [8]),
        _node(14, "erf", [T, D], [3]),
        _node(15, "add", [T, D], [13, 14]),
        _node(16, "concat", [T, 3 * D - 1], [12, 15], axis=1),
    ]
    return {"entry": "embed", "inputs": inputs, "output": 16, "nodes": nodes}


def self_test(rep):
    """Check the evaluator, the shape rules, compare() and the references."""
    rng = np.random.default_rng(7)
    # 1. attention graph against the hand-written reference
    g = _attention_graph(2, 3, 5, 4)
    a = make_inputs(g, rng)
    ok, rel, msg = compare(eval_graph(g, a), np_attention(a["q"], a["k"], a["v"]))
    rep.check("self:attention", "graph vs reference", ok, rel, msg)
    try:
        check_shapes(g)
        rep.ok("self:attention", "shape rules")
    except ValueError as e:
        rep.fail("self:attention", "shape rules", e)
    # 2. gather / iota / select / slice / concat graph, written out by hand
    V, D, T = 7, 4, 5
    g = _embed_ce_graph(V, D, T)
    a = make_inputs(g, rng)
    bound_ok = index_bounds(g) == {"ids": V} and a["ids"].max() < V
    rep.check("self:embed", "index bound", bound_ok, msg="bounds %s" % index_bounds(g))
    emb = a["E"][a["ids"]]
    keep = np.arange(D)[None, :] <= np.arange(T)[:, None]
    sel = np.where(keep, emb, -np.inf)
    want = np.concatenate([sel, sel[:, 1:], keep + _erf(emb)], axis=1)
    ok, rel, msg = compare(eval_graph(g, a), want)
    rep.check("self:embed", "graph vs reference", ok, rel, msg)
    try:
        check_shapes(g)
        rep.ok("self:embed", "shape rules")
    except ValueError as e:
        rep.fail("self:embed", "shape rules", e)
    # 3. gather with broadcasting over the other axes
    x = rng.standard_normal((3, 5))
    idx = np.array([[4, 0]])
    got = gather(x, idx, 1, (3, 2))
    ok, rel, msg = compare(got, x[:, [4, 0]])
    rep.check("self:gather", "broadcast index", ok, rel, msg)
    # 4. a wrong declared shape must be caught by both the evaluator and the rules
    g = _attention_graph(1, 1, 3, 2)
    g["nodes"][7]["shape"] = [1, 1, 3, 3]  # amax without keepdim: wrong
    caught = 0
    for f in (lambda: eval_graph(g, make_inputs(g, rng)), lambda: check_shapes(g)):
        try:
            f()
        except ValueError:
            caught += 1
    rep.check("self:bad-shape", "caught", caught == 2, msg="caught by %d of 2" % caught)
    # 5. compare(): tolerance, NaN and inf positions, shapes
    b = np.array([1.0, -2.0, np.nan, np.inf, -np.inf])
    cases = [
        (b * (1 + 1e-14), True), (b + np.array([3e-12, 0, 0, 0, 0]), False),
        (np.array([1.0, -2.0, 0.0, np.inf, -np.inf]), False),
        (np.array([1.0, -2.0, np.nan, -np.inf, -np.inf]), False),
        (b[:4], False),
    ]
    bad = [i for i, (x, want_ok) in enumerate(cases) if compare(x, b)[0] != want_ok]
    rep.check("self:compare", "verdicts", not bad, msg="wrong verdict on cases %s" % bad)
    # 6. two formulations of the transformer block agree (heads by slicing in
    #    np_block, by reshape/transpose here)
    B, N, Dm, H, F = 2, 6, 8, 2, 12
    w = {k: rng.standard_normal(s) for k, s in [
        ("x", (B, N, Dm)), ("g1", (Dm,)), ("Wq", (Dm, Dm)), ("Wk", (Dm, Dm)), ("Wv", (Dm, Dm)),
        ("Wo", (Dm, Dm)), ("g2", (Dm,)), ("Wg", (Dm, F)), ("Wu", (Dm, F)), ("Wd", (F, Dm))]}
    h = np_rmsnorm(w["x"], w["g1"])
    sp = lambda t: t.reshape(B, N, H, Dm // H).transpose(0, 2, 1, 3)
    att = np_attention(sp(h @ w["Wq"]), sp(h @ w["Wk"]), sp(h @ w["Wv"]), causal=True)
    x1 = w["x"] + att.transpose(0, 2, 1, 3).reshape(B, N, Dm) @ w["Wo"]
    h2 = np_rmsnorm(x1, w["g2"])
    alt = x1 + (np_silu(h2 @ w["Wg"]) * (h2 @ w["Wu"])) @ w["Wd"]
    ok, rel, msg = compare(ref_block(w, {"H": H}), alt)
    rep.check("self:block", "two references", ok, rel, msg)


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def defs_of(path):
    """(name, has parameters) of each top-level def in a .lean file."""
    out = []
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"def\s+(\S+)\s*(:=|.)", line)
            if m:
                out.append((m.group(1), m.group(2) != ":="))
    return out


class Report:
    """Counts and prints one line per check."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, label, what, rel=None):
        self.passed += 1
        tail = "" if rel is None else "  rel=%.1e" % rel
        print("ok    %-58s %s%s" % (label, what, tail), flush=True)

    def check(self, label, what, ok, rel=None, msg=""):
        """ok() or fail() as `ok` says."""
        if ok:
            self.ok(label, what, rel)
        else:
            self.fail(label, what, msg)

    def fail(self, label, what, msg):
        self.failed += 1
        print("FAIL  %-58s %s" % (label, what), flush=True)
        for line in str(msg).rstrip().splitlines():
            print("      " + line, flush=True)


def check_case(tool, rep, path, entry, sizes, ref, rng, tmp):
    """Graph, inputs, interpreter, NumPy evaluation and reference for one entry."""
    label = "%s:%s" % (os.path.basename(path), entry)
    try:
        graph = get_graph(tool, path, entry, sizes)
        positive = [i["name"] for i in graph["inputs"] if re.match(r"p\d*$", i["name"])]
        vals = make_inputs(graph, rng, positive=positive)
        files = write_inputs(vals, tmp)
        out = run_eval(tool, path, entry, sizes, files, os.path.join(tmp, "out.npy"))
    except ToolError as e:
        rep.fail(label, "tilesmith", e)
        return
    try:
        mine = eval_graph(graph, vals)
    except Exception as e:  # a bad graph is a failure, whatever the cause
        rep.fail(label, "graph vs numpy", "NumPy evaluation of the graph failed: %s" % e)
        return
    ok, rel, msg = compare(out, mine)
    rep.check(label, "interp vs graph", ok, rel, msg)
    if ref is None:
        return
    try:
        with np.errstate(all="ignore"):
            want = ref(vals, sizes) if sizes is not None else ref(vals)
    except Exception as e:
        rep.fail(label, "interp vs reference", "the reference raised %r" % e)
        return
    ok, rel, msg = compare(out, want)
    rep.check(label, "interp vs reference", ok, rel, msg)


def check_instance(tool, rep, path, entry):
    """Elaborate a full-size instance and check its node shapes."""
    label = "%s:%s" % (os.path.basename(path), entry)
    try:
        graph = get_graph(tool, path, entry, {})
        check_shapes(graph)
    except (ToolError, ValueError, KeyError) as e:
        rep.fail(label, "shapes", e)
        return
    out = next(n for n in graph["nodes"] if n["id"] == graph["output"])
    rep.ok(label, "shapes %s" % out["shape"])


def parse_args(argv):
    """The command line: the tool, an optional filter, seed and --keep."""
    ap = argparse.ArgumentParser(
        description="NumPy cross-check of tilesmith's front end and interpreter.")
    ap.add_argument("tool", nargs="?", help="the tilesmith binary, e.g. ./tilesmith")
    ap.add_argument("-k", dest="filter", default=None,
                    help="run only checks whose FILE:ENTRY contains this text")
    ap.add_argument("--seed", type=int, default=1234, help="seed of the random inputs")
    ap.add_argument("--keep", action="store_true", help="keep the temporary .npy files")
    ap.add_argument("--self-test", action="store_true",
                    help="only test the checker itself on hand-made graphs (no tool needed)")
    opts = ap.parse_args(argv[1:])
    if not opts.self_test and not opts.tool:
        ap.error("the tilesmith binary is required (or --self-test)")
    return opts


def run_all(tool, rep, filt, rng, tmp):
    """The prims, the examples at small sizes, then the full-size instances."""
    def wanted(path, entry):
        return filt is None or filt in "%s:%s" % (path, entry)

    def case_dir(path, entry):
        d = os.path.join(tmp, "%s_%s" % (os.path.splitext(os.path.basename(path))[0], entry))
        os.makedirs(d, exist_ok=True)
        return d

    # 1. every def of tests/prims.lean (with its reference where there is one)
    for name, _ in defs_of(PRIMS):
        if wanted(PRIMS, name):
            check_case(tool, rep, PRIMS, name, None, PRIM_REFS.get(name), rng,
                       case_dir(PRIMS, name))
    # 2. the generic def of every example, at small sizes
    for path, entry, sizes, ref in EXAMPLES:
        if wanted(path, entry):
            check_case(tool, rep, path, entry, sizes, ref, rng, case_dir(path, entry))
    # 3. every concrete instance of the examples: elaboration and shapes
    generic = {(p, e) for p, e, _, _ in EXAMPLES}
    for fname in sorted(os.listdir(os.path.join(ROOT, "examples"))):
        if not fname.endswith(".lean"):
            continue
        path = "examples/" + fname
        defs = defs_of(path)
        covered = any((path, name) in generic for name, has_params in defs if has_params)
        if filt is None and not covered:
            rep.fail(path, "coverage", "no generic definition of this file is in EXAMPLES")
        for name, has_params in defs:
            if not has_params and wanted(path, name):
                check_instance(tool, rep, path, name)


def main(argv):
    opts = parse_args(argv)
    rep = Report()
    if opts.self_test:
        self_test(rep)
    else:
        tool = os.path.abspath(opts.tool)
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            rep.fail(opts.tool, "binary", "no executable tilesmith at %s (run `make` first)" % tool)
        else:
            tmp = tempfile.mkdtemp(prefix="tilesmith-crosscheck-")
            try:
                run_all(tool, rep, opts.filter, np.random.default_rng(opts.seed), tmp)
            finally:
                if opts.keep:
                    print("inputs kept in %s" % tmp)
                else:
                    shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (rep.passed, rep.failed))
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
