# Experiment (session 15, 2026-12-05): variants of the emitted attention kernel,
# written from bench/out modules by hand-made edits of the key loop, timed on the
# GPU by bench/exp/run_variants.sh: v1 one exp fragment (exp computed once),
# v2 the sum reduced before P.V, v3 v2 with the 1/sqrt(D) scale folded into
# exp2 (no scaled-score fragment), v4a-c the FA3-style manual pipeline schedule
# (order/stage of T.Pipelined).  docs/BENCHMARKS.md records what they showed.
# usage: python3 bench/exp/gen.py MODULE.py...; then gen.py v4x bench/exp/*_v3.py
import re, sys
def variants(path):
    src = open(path).read().split("\n")
    s = next(i for i, l in enumerate(src) if "for k in T.Pipelined" in l)
    e = next(i for i in range(s + 1, len(src)) if not src[i].startswith(" " * 12))
    body = src[s + 1:e]
    # group into statements: a "for" line with its next line
    st, i = [], 0
    while i < len(body):
        if body[i].strip().startswith("for "):
            st.append(body[i:i + 2]); i += 2
        else:
            st.append(body[i:i + 1]); i += 1
    name = lambda g: re.match(r"\s*(?:for .*:\s*)?(\S+?)[\[(]", g[-1]).group(1) if not g[-1].strip().startswith("T.") else g[-1].strip().split("(")[0] + ":" + g[-1].split("(")[1].split(",")[0]
    keys = [name(g) for g in st]
    d = dict(zip(keys, st))
    print(keys, file=sys.stderr)
    fill, copyK, g1 = st[0], st[1], st[2]
    E7, prev, mx, rho, S2, A9, copyV, g2, S3, E11, sm = [d[k] for k in keys[3:]]
    A9c = [A9[0], A9[1].split("=")[0] + '= T.Cast("bfloat16", E11[i, j])']
    out = {}
    out["v1"] = [fill, copyK, g1, E7, prev, mx, rho, S2, E11, A9c, copyV, g2, S3, sm]
    out["v2"] = [fill, copyK, g1, E7, prev, mx, rho, S2, E11, S3, sm, A9c, copyV, g2]
    scale = float(re.search(r"T.float32\(([0-9.e-]+)\)\)", E7[1]).group(1))
    c = repr(scale * 1.4426950408889634)
    mx3 = [mx[0].replace("E7", "C4")]
    rho3 = [rho[0], rho[1].replace("1.4426950408889634", c)]
    E113 = [E11[0], E11[1].replace("E7", "C4").replace("1.4426950408889634", c)]
    out["v3"] = [fill, copyK, g1, prev, mx3, rho3, S2, E113, S3, sm, A9c, copyV, g2]
    for k, v in out.items():
        lines = src[:s + 1] + [l for g in v for l in g] + src[e:]
        open(path.replace(".py", f"_{k}.py").replace("bench/out/", "bench/exp/"), "w").write("\n".join(lines))
for p in (sys.argv[1:] if sys.argv[1] not in ("v4", "v4x") else []):
    variants(p)

def v4(path, stages=2):
    src = open(path).read().split("\n")
    s = next(i for i, l in enumerate(src) if "for k in T.Pipelined" in l)
    e = next(i for i in range(s + 1, len(src)) if not src[i].startswith(" " * 12))
    body = src[s + 1:e]
    st, i = [], 0
    while i < len(body):
        n = 2 if body[i].strip().startswith("for ") else 1
        st.append(body[i:i + n]); i += n
    # v3 order: fill copyK gemm prev max rho S2 E11 S3 sum A9 copyV gemm
    fill, copyK, g1, prev, mx, rho, S2, E11, S3, sm, A9, copyV, g2 = st
    new = [copyK, fill, g1, prev, mx, rho, E11, S3, sm, A9, S2, copyV, g2]
    n = s
    head = src[s].split("T.Pipelined(")[0]
    trips = src[s].split("T.Pipelined(")[1].split(",")[0]
    src[s] = (head + f"T.Pipelined({trips}, num_stages={stages}, order=[-1, 0, 3, 1, -1, 2], stage=[-1, 0, 0, 1, -1, 1], "
              "group=[[0], [1, 2], [3, 4, 5, 6, 7, 8, 9], [10], [11], [12]]):")
    flat = [l for g in new for l in g]
    lines = src[:s + 1] + flat + src[e:]
    open(path.replace("_v3.py", f"_v4s{stages}.py"), "w").write("\n".join(lines))
    return flat
if __name__ == "__main__" and sys.argv[1] == "v4":
    for p in sys.argv[2:]:
        v4(p, 2); v4(p, 1)

def v4x(path, tag, order, stage, stages_kw=None):
    src = open(path).read().split("\n")
    s = next(i for i, l in enumerate(src) if "for k in T.Pipelined" in l)
    e = next(i for i in range(s + 1, len(src)) if not src[i].startswith(" " * 12))
    body = src[s + 1:e]
    st, i = [], 0
    while i < len(body):
        n = 2 if body[i].strip().startswith("for ") else 1
        st.append(body[i:i + n]); i += n
    fill, copyK, g1, prev, mx, rho, S2, E11, S3, sm, A9, copyV, g2 = st
    new = [copyK, fill, g1, prev, mx, rho, E11, S3, sm, A9, S2, copyV, g2]
    head = src[s].split("T.Pipelined(")[0]
    trips = src[s].split("T.Pipelined(")[1].split(",")[0]
    kw = f", num_stages={stages_kw}" if stages_kw else ""
    src[s] = head + f"T.Pipelined({trips}{kw}, order={order}, stage={stage}):"
    lines = src[:s + 1] + [l for g in new for l in g] + src[e:]
    open(path.replace("_v3.py", f"_{tag}.py"), "w").write("\n".join(lines))
if __name__ == "__main__" and sys.argv[1] == "v4x":
    for p in sys.argv[2:]:
        v4x(p, "v4a", [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 3, 4, 5], [0] * 10 + [1, 1, 1])
        v4x(p, "v4b", [1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 4, 0, 5], [0] * 10 + [1, 0, 1])
        v4x(p, "v4c", [1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 4, 0, 5], [0] + [1] * 9 + [2, 1, 2])
