"""HBM bytes each contender moves, measured by Nsight Compute.

    python3 bench/ncu_bytes.py NCU.csv HARNESS.json

NCU.csv is `ncu --import REPORT --csv --page raw --print-units base` of a
run of `gpu_harness.py --ncu-marks` under `ncu --profile-from-start off
--metrics dram__bytes_read.sum,dram__bytes_write.sum` (bench/gpu_session.sh
bytes).  The harness ran one call of each contender after a marker kernel
(tilesmith_ncu_mark) and wrote the order of the marks into the JSON
(results[contender]["ncu_mark"]); ncu lists the profiled kernels in launch
order, so the kernels between mark i and mark i+1 are contender i's.

ncu flushes the caches before each kernel it profiles (its default
--cache-control all), so every kernel's DRAM bytes are those of a cold L2:
what the kernel itself reads from and writes to HBM, the quantity the
plans' footprint (explain) predicts.  Prints one markdown table: per case,
kernels and MB for ours (TileLang, Triton), the naive lowering when the run
had it, torch.compile and eager, and the plan's predicted footprint.
"""
import csv
import json
import sys

MARK = "tilesmith_ncu_mark"
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")


def number(s):
    """ncu's printed value ('1,234.5', 'n/a') as a float, or None."""
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def read_kernels(path):
    """[(kernel name, {metric: value})] in ncu's ID order, from either the
    raw page (a column per metric) or the details page (a row per metric)."""
    rows = [r for r in csv.reader(open(path, newline="")) if r]
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "ID" in r), None)
    if head is None:
        raise SystemExit("%s: no ncu CSV header (ID, Kernel Name) found" % path)
    cols = rows[head]
    at = {c: i for i, c in enumerate(cols)}
    kernels = {}
    for r in rows[head + 1:]:
        if len(r) != len(cols) or number(r[at["ID"]]) is None:
            continue  # the units row, ncu's own messages
        k = kernels.setdefault(int(number(r[at["ID"]])), [r[at["Kernel Name"]], {}])
        if "Metric Name" in at:
            k[1][r[at["Metric Name"]]] = number(r[at["Metric Value"]])
        else:
            for m in METRICS:
                if m in at:
                    k[1][m] = number(r[at[m]])
    return [kernels[i] for i in sorted(kernels)]


def split_by_marks(kernels):
    """The kernels after each marker kernel, up to the next one."""
    groups = []
    for name, vals in kernels:
        if MARK in name:
            groups.append([])
        elif groups:
            groups[-1].append((name, vals))
    return groups


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[2].strip())
    groups = split_by_marks(read_kernels(sys.argv[1]))
    data = json.load(open(sys.argv[2]))
    cols = ["tilelang", "triton", "tilelang-naive", "triton-naive", "torch.compile", "eager"]
    seen = [c for c in cols if any(c in r.get("results", {}) for r in data["rows"])]

    def cell(res):
        i = (res or {}).get("ncu_mark")
        if i is None:
            return "error" if res and ("ncu_error" in res or "error" in res) else "–"
        if i >= len(groups):
            return "not profiled"
        ks = groups[i]
        b = sum((v.get(m) or 0) for _, v in ks for m in METRICS)
        missing = sum(1 for _, v in ks for m in METRICS if v.get(m) is None)
        return "%d, %.1f%s" % (len(ks), b / 1e6, " (%d n/a)" % missing if missing else "")
    print("| case | " + " | ".join("%s: kernels, DRAM MB" % c for c in seen) + " | ours planned: kernels, MB |")
    print("|---" * (len(seen) + 2) + "|")
    for r in data["rows"]:
        res, plans = r.get("results", {}), r.get("plans", {})
        plan = plans.get("tilelang") or plans.get("triton") or {}
        fp = plan.get("footprint_bytes")
        print("| %s | %s | %s |" % (r.get("case", "?"), " | ".join(cell(res.get(c)) for c in seen),
                                    "%s, %.1f" % (plan.get("kernels", "–"), fp / 1e6) if fp else "–"))
    print("\nDRAM MB: dram__bytes_read.sum + dram__bytes_write.sum over the kernels of one call, each kernel "
          "profiled by ncu with a cold L2 (--cache-control all); %d marks in ncu's list, %d contenders in the JSON."
          % (len(groups), sum(1 for r in data["rows"] for x in r.get("results", {}).values() if "ncu_mark" in x)))


if __name__ == "__main__":
    main()
