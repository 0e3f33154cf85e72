#!/usr/bin/env python3
"""Each case's variants beside their target's module, from one harness JSON:
ms (ok or not) and the ratio variant / base (below 1: the variant is faster).
usage: python3 bench/exp/s17/compare.py HARNESS.json"""
import json
import sys

d = json.load(open(sys.argv[1]))
print(d["meta"].get("device"), d["meta"].get("date"))
for r in d["rows"]:
    res = r["results"]
    comp = res.get("torch.compile", {}).get("ms")
    line = [f"{r['case']:<28} compile {comp:.4f}" if comp else f"{r['case']:<28} compile -"]
    for v, x in res.items():
        if v.split("-")[0] not in ("tilelang", "triton"):
            continue
        ms = x.get("ms")
        base = res.get(v.split("-")[0], {}).get("ms")
        tag = "" if x.get("ok") else " WRONG" if ms else " FAIL"
        rel = f" ({ms / base:.3f})" if ms and base and v != v.split("-")[0] else ""
        line.append(f"{v} {ms:.4f}{rel}{tag}" if ms else f"{v} -{tag}")
    print("  ".join(line))
