# Experiment driver (session 16): check each module's run() against its
# reference on fresh inputs, then time run() (the median of do_bench) in three
# rounds, whether or not it matched (a variant that drops work is timed too).
import importlib.util
import sys
import torch
import triton.testing


def load(path):
    spec = importlib.util.spec_from_file_location(path.replace("/", "_").removesuffix(".py"), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


mods = {}
for p in sys.argv[1:]:
    try:
        m = load(p)
        args = m.random_inputs()
        out, ref = m.run(*args), m.reference(*args)
        torch.cuda.synchronize()
        ok, err, scale = m.compare(out, ref)
        print(f"{p}: {'ok' if ok else 'MISMATCH'} err {err:.3g} of {scale:.3g}", flush=True)
        mods[p] = m
    except Exception as ex:  # a variant that does not build or run is reported, not timed
        print(f"{p}: FAILED {type(ex).__name__}: {str(ex)[:300]}", flush=True)
for r in range(3):
    for p, m in mods.items():
        args = m.random_inputs()
        g = torch.cuda.CUDAGraph()
        m.run(*args)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            m.run(*args)
        t = triton.testing.do_bench(lambda: g.replay(), warmup=25, rep=200, return_mode="median")
        print(f"round {r} {p}: {t:.4f} ms", flush=True)
