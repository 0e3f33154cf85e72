"""How well the cost model ranks what it chose between, against the H200.

usage: python3 bench/calibration.py RESULTS.json MANIFEST.json

RESULTS.json is bench/gpu_harness.py's output; MANIFEST.json is the
bench/out/manifest.json it ran on, written by `CANDIDATES=K NAIVE=1
bench/prepare.sh`, which records the cost model's predicted time of every
variant of a case (the chosen plan, the naive lowering, the first K
runner-up plans of the search).  For each target (tilelang, triton) it
prints the Spearman rank correlation of predicted against measured time:
pooled over every (case, variant) timed and correct, and within each case
(over its variants; the mean over cases with three or more), and how often
the plan the model chose was the fastest variant measured.  Ties get their
mean rank.
"""
import json
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main():
    res = json.load(open(sys.argv[1]))
    man = json.load(open(sys.argv[2]))
    pred = {c["name"]: c.get("predicted_us", {}) for c in man["cases"]}
    for target in ("tilelang", "triton"):
        pooled_p, pooled_m, within, chosen_best, cases = [], [], [], 0, 0
        for row in res["rows"]:
            p = pred.get(row["case"], {})
            pts = [(p[v], r["ms"] * 1000, v) for v, r in row["results"].items()
                   if v.split("-")[0] == target and v in p and r.get("ok") and r.get("ms")]
            if not pts:
                continue
            cases += 1
            pooled_p += [x[0] for x in pts]
            pooled_m += [x[1] for x in pts]
            if len(pts) >= 3:
                within.append(spearman([x[0] for x in pts], [x[1] for x in pts]))
            fastest = min(pts, key=lambda x: x[1])[2]
            chosen_best += fastest == target
            line = ", ".join(f"{v} {pp:.0f}/{mm:.0f}" for pp, mm, v in sorted(pts))
            print(f"  {target:8s} {row['case']:30s} predicted/measured us: {line}")
        if not pooled_p:
            print(f"{target}: nothing timed")
            continue
        w = [x for x in within if x == x]
        print(f"{target}: {len(pooled_p)} variants of {cases} cases; Spearman pooled {spearman(pooled_p, pooled_m):.3f}; "
              f"within a case, mean {sum(w) / len(w) if w else float('nan'):.3f} over {len(w)} cases; "
              f"the chosen plan measured fastest in {chosen_best} of {cases}")


if __name__ == "__main__":
    main()
