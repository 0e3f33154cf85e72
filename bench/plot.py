"""Draw a bench/gpu_harness.py results JSON as one PNG.

usage: python3 bench/plot.py RESULTS.json [-o OUT.png] [--all]

Top: each contender's speedup over torch.compile per case (torch.compile's
time / the contender's; log scale, 1 = parity).  Bottom: each contender's
floor fraction per case (the case's roofline floor / its time; present only
in JSON written since the harness measures floors).  Only timed, correct
results count (a failed check, an error or a torch.compile that fell back to
eager leaves a gap).  By default the runner-up plans (*-cand*) and other
experiment variants are left out; --all draws every contender.

Draws with matplotlib when it imports, else with gnuplot when it is on PATH,
else says so and exits 0.  Needs no torch.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

from benchrows import PEERS, module_kind, row_library, usable_ms

NOT_THE_SAME = {"matmul alone"}  # a library contender computing less than the case
DEFAULT = ("tilelang", "triton", "library", "flex_attention", "torch.compile max-autotune",
           "tilelang-naive", "triton-naive", "eager")





def series(data, everything=False):
    """(case names, contender names, speedup {contender: [value or None per
    case]}, floor fraction {contender: [...]}).  Library kernels share one
    series, "library"."""
    rows = [r for r in data.get("rows", []) if isinstance(r, dict)]
    cases = [r.get("case", "?") for r in rows]
    names = []
    per_row = []
    for r in rows:
        res = r.get("results", {}) or {}
        lib = row_library(r)
        m = {}
        for k, x in res.items():
            if k == lib:
                if k in NOT_THE_SAME:
                    continue
                k = "library"
            m[k] = x
            if k not in names:
                names.append(k)
        per_row.append(m)
    if everything:
        chosen = [n for n in DEFAULT if n in names] + [n for n in names if n not in DEFAULT and n != "torch.compile"]
    else:
        chosen = [n for n in DEFAULT if n in names]
    speed = {n: [] for n in chosen}
    frac = {n: [] for n in chosen + (["torch.compile"] if "torch.compile" in names else [])}
    for m in per_row:
        base = usable_ms(m.get("torch.compile"))
        for n in chosen:
            ms = usable_ms(m.get(n))
            speed[n].append(base / ms if base and ms else None)
        for n in frac:
            x = m.get(n)
            f = x.get("floor_frac") if usable_ms(x) else None
            frac[n].append(f if isinstance(f, (int, float)) and f > 0 else None)
    frac = {n: v for n, v in frac.items() if any(y is not None for y in v)}
    return cases, chosen, speed, frac


def title_of(data, path):
    meta = data.get("meta", {}) or {}
    bits = [os.path.basename(path)]
    for k in ("device", "date", "torch"):
        if meta.get(k):
            bits.append(str(meta[k]))
    return " | ".join(bits)


def plot_matplotlib(data, path, out, everything):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases, _, speed, frac = series(data, everything)
    panels = [(speed, "torch.compile time / contender time (log)", True)]
    if frac:
        panels.append((frac, "floor / contender time (log)", False))
    width = max(10, 0.6 * len(cases) + 4)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, 4.5 * len(panels)), squeeze=False)
    for ax, (values, ylabel, parity) in zip(axes[:, 0], panels):
        names = [n for n in values if any(v is not None for v in values[n])]
        bar_w = 0.8 / max(1, len(names))
        for i, n in enumerate(names):
            xs = [j + (i - (len(names) - 1) / 2) * bar_w for j in range(len(cases))]
            ys = [v if v is not None else float("nan") for v in values[n]]
            ax.bar(xs, ys, bar_w, label=n)
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--" if parity else ":")
        ax.set_ylabel(ylabel)
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels(cases, rotation=60, ha="right", fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=min(4, max(1, len(names))))
    axes[0, 0].set_title(title_of(data, path), fontsize=9)
    if not frac:
        axes[0, 0].text(0.01, 0.97, "no floor data in this JSON (written before the harness measured floors)",
                        transform=axes[0, 0].transAxes, fontsize=7, va="top")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def gp_quote(s):
    return '"%s"' % str(s).replace("\\", "\\\\").replace('"', '\\"')


def plot_gnuplot(data, path, out, everything):
    cases, _, speed, frac = series(data, everything)
    tmp = tempfile.mkdtemp(prefix="plot-")
    script = []

    def datafile(name, values):
        names = [n for n in values if any(v is not None for v in values[n])]
        p = os.path.join(tmp, name)
        with open(p, "w") as f:
            f.write("case " + " ".join(gp_quote(n) for n in names) + "\n")
            for j, c in enumerate(cases):
                f.write(gp_quote(c) + " " + " ".join(
                    "?" if values[n][j] is None else repr(float(values[n][j])) for n in names) + "\n")
        return p, names

    panels = [(datafile("speed.dat", speed), "torch.compile time / contender time (log)")]
    if frac:
        panels.append((datafile("frac.dat", frac), "floor / contender time (log)"))
    w = int(max(1000, 45 * len(cases) + 300))
    h = 430 * len(panels) + 80
    script += ["set terminal @TERM@ size %d,%d" % (w, h), "set output %s" % gp_quote(out), "set termoption noenhanced",
               "set lmargin 12", "set bmargin 9",
               'set datafile missing "?"', "set style data histogram", "set style histogram cluster gap 1",
               "set style fill solid 0.9 border -1", 'set format y "%g"', "set boxwidth 0.9", "set logscale y",
               "set xtics rotate by -60 font ',8'", "set key outside right top font ',8'",
               "set grid ytics", "set multiplot layout %d,1 title %s" % (len(panels), gp_quote(title_of(data, path)))]
    for (p, names), ylabel in panels:
        if not names:
            continue
        script += ["set ylabel %s" % gp_quote(ylabel),
                   "plot " + ", ".join("%s using %d:xtic(1) title columnhead(%d)" % (gp_quote(p), i + 2, i + 2)
                                       for i in range(len(names))) + ", 1 with lines lc rgb 'black' dt 2 notitle"]
    script.append("unset multiplot")
    err = ""
    for term in ("pngcairo", "png"):
        sp = os.path.join(tmp, "plot.gp")
        with open(sp, "w") as f:
            f.write("\n".join(script).replace("@TERM@", term) + "\n")
        r = subprocess.run(["gnuplot", sp], capture_output=True, text=True)
        if r.returncode == 0 and os.path.exists(out) and os.path.getsize(out) > 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        err = r.stderr.strip()[-500:]
    raise RuntimeError("gnuplot failed: %s (script and data left in %s)" % (err, tmp))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("-o", "--out", help="PNG to write (default: the JSON's name with .png)")
    ap.add_argument("--all", action="store_true", help="every contender, runner-up plans included")
    args = ap.parse_args()
    data = json.load(open(args.json))
    out = args.out or os.path.splitext(args.json)[0] + ".png"
    cases, chosen, speed, frac = series(data, args.all)
    if not cases:
        print("plot: no rows in %s" % args.json)
        return 0
    if not any(v is not None for n in speed for v in speed[n]):
        print("plot: note: no case has both torch.compile and a contender timed; the speedup panel is empty")
    try:
        __import__("matplotlib")
        how = "matplotlib"
    except Exception:
        how = "gnuplot" if shutil.which("gnuplot") else None
    if how is None:
        print("plot: neither matplotlib nor gnuplot is available; nothing drawn")
        return 0
    try:
        (plot_matplotlib if how == "matplotlib" else plot_gnuplot)(data, args.json, out, args.all)
    except Exception as e:
        print("plot: %s failed: %s: %s" % (how, type(e).__name__, e))
        return 1
    geo = []
    for n in chosen:
        v = [x for x in speed[n] if x]
        if v:
            geo.append("%s %.2fx (%d)" % (n, math.exp(sum(math.log(x) for x in v) / len(v)), len(v)))
    print("plot: wrote %s (%s; %d cases; %s floor data)" % (out, how, len(cases), "with" if frac else "no"))
    if geo:
        print("plot: geometric mean of torch.compile's time over each: " + "; ".join(geo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
