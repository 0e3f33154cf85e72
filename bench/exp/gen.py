# Experiment (session 15, 2026-12-05): variants of the emitted attention kernel,
# written from bench/out modules by hand-made edits of the key loop, timed on the
# GPU by bench/exp/run_variants.sh: v1 one exp fragment (exp computed once),
# v2 the sum reduced before P.V, v3 v2 with the 1/sqrt(D) scale folded into
# exp2 (no scaled-score fragment), v4a-c the FA3-style manual pipeline schedule
# (order/stage of T.Pipelined).  docs/BENCHMARKS.md records what they showed.
# usage: python3 bench/exp/gen.py MODULE.py...; then gen.py v4x bench/exp/*_v3.py
# (modules emitted before d9cf28e, whose key loop still makes the scaled-score
# fragment E7: bench/prepare.sh at 410072b)
import re
import sys


def key_loop(path):
    """The module's lines, the key loop's line range (s, e) and its body as
    statements (a `for` line with the next one, else one line)."""
    src = open(path).read().split("\n")
    s = next(i for i, l in enumerate(src) if "for k in T.Pipelined" in l)
    e = next(i for i in range(s + 1, len(src)) if not src[i].startswith(" " * 12))
    body, st, i = src[s + 1:e], [], 0
    while i < len(body):
        n = 2 if body[i].strip().startswith("for ") else 1
        st.append(body[i:i + n])
        i += n
    return src, s, e, st


def write(src, s, e, stmts, path):
    open(path, "w").write("\n".join(src[:s + 1] + [l for g in stmts for l in g] + src[e:]))


def variants(path):
    src, s, e, st = key_loop(path)
    fill, copyK, g1, E7, prev, mx, rho, S2, A9, copyV, g2, S3, E11, sm = st
    A9c = [A9[0], A9[1].split("=")[0] + '= T.Cast("bfloat16", E11[i, j])']
    out = {"v1": [fill, copyK, g1, E7, prev, mx, rho, S2, E11, A9c, copyV, g2, S3, sm],
           "v2": [fill, copyK, g1, E7, prev, mx, rho, S2, E11, S3, sm, A9c, copyV, g2]}
    scale = float(re.search(r"T.float32\(([0-9.e-]+)\)\)", E7[1]).group(1))
    c = repr(scale * 1.4426950408889634)
    mx3 = [mx[0].replace("E7", "C4")]
    rho3 = [rho[0], rho[1].replace("1.4426950408889634", c)]
    E113 = [E11[0], E11[1].replace("E7", "C4").replace("1.4426950408889634", c)]
    out["v3"] = [fill, copyK, g1, prev, mx3, rho3, S2, E113, S3, sm, A9c, copyV, g2]
    for k, v in out.items():
        write(src, s, e, v, path.replace(".py", f"_{k}.py").replace("bench/out/", "bench/exp/"))


def v4x(path, tag, order, stage):
    """v3 (its path) with TileLang's manual schedule: per-statement order and stage."""
    src, s, e, st = key_loop(path)
    fill, copyK, g1, prev, mx, rho, S2, E11, S3, sm, A9, copyV, g2 = st
    new = [copyK, fill, g1, prev, mx, rho, E11, S3, sm, A9, S2, copyV, g2]
    head, rest = src[s].split("T.Pipelined(")
    src[s] = head + f"T.Pipelined({rest.split(',')[0]}, order={order}, stage={stage}):"
    write(src, s, e, new, path.replace("_v3.py", f"_{tag}.py"))


if __name__ == "__main__":
    if sys.argv[1] == "v4x":
        for p in sys.argv[2:]:
            v4x(p, "v4a", [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 3, 4, 5], [0] * 10 + [1, 1, 1])
            v4x(p, "v4b", [1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 4, 0, 5], [0] * 10 + [1, 0, 1])
            v4x(p, "v4c", [1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 4, 0, 5], [0] + [1] * 9 + [2, 1, 2])
    else:
        for p in sys.argv[1:]:
            variants(p)
