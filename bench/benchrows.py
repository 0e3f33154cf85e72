"""Reading the harness's result rows (bench/gpu_harness.py writes them;
bench/plot.py and the harness's own summary read them).  No torch here:
plotting runs on machines without it."""

PEERS = ("eager", "torch.compile", "torch.compile max-autotune", "flex_attention")


def module_kind(name):
    """"tilelang" or "triton" for a manifest variant (tilelang-naive,
    triton-cand1, ...), else None."""
    k = name.split("-")[0]
    return k if k in ("tilelang", "triton") else None


def row_library(row):
    """The row's library contender's name (older JSON: the first result that
    is no peer and no module), or None."""
    if row.get("library"):
        return row["library"]
    for k in row.get("results", {}):
        if k not in PEERS and not module_kind(k):
            return k
    return None


def usable_ms(x):
    """A result's ms when it counts: timed, no error, not a failed check,
    not a torch.compile that fell back to eager."""
    if not isinstance(x, dict) or "error" in x or x.get("ok") is False or x.get("fallback"):
        return None
    ms = x.get("ms")
    return ms if isinstance(ms, (int, float)) and ms > 0 else None
