"""Run emitted modules on the GPU, each in a process of its own: two calls of
run() on the module's random inputs, compared with its reference() (the
module's own bound, compare()) and with each other (a race or a
miscompiled kernel gives two different results).  One JSON line a module.
usage: python3 bench/exp/s20/sweep.py DIR|'GLOB' [JOBS] [SECONDS_PER_MODULE]
       python3 bench/exp/s20/sweep.py --one MODULE.py"""
import concurrent.futures
import glob
import importlib.util
import json
import os
import subprocess
import sys
import time


def one(path):
    import torch
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    t0 = time.time()
    if hasattr(mod, "warm"):
        mod.warm(workers=4)
    args = mod.random_inputs()
    o1 = mod.run(*args).clone()
    o2 = mod.run(*args)
    ref = mod.reference(*args)
    torch.cuda.synchronize()
    ok, err, scale = mod.compare(o1, ref)
    a, b = o1.double(), o2.double()
    same = bool(((a == b) | (a.isnan() & b.isnan())).all())
    between = float((a - b).abs().nan_to_num(0).max()) if not same else 0.0
    print(json.dumps({"module": os.path.basename(path), "ok": ok, "max_err": err, "max_ref": scale,
                      "deterministic": same, "max_between_calls": between, "seconds": round(time.time() - t0, 1)}))


def main():
    if sys.argv[1] == "--one":
        return one(sys.argv[2])
    pat = sys.argv[1] if "*" in sys.argv[1] else os.path.join(sys.argv[1], "*.py")
    mods = sorted(glob.glob(pat))
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 240

    def go(m):
        try:
            p = subprocess.run([sys.executable, __file__, "--one", m], capture_output=True, text=True, timeout=limit)
            lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
            if p.returncode == 0 and lines:
                return lines[-1]
            return json.dumps({"module": os.path.basename(m), "error": (p.stderr or p.stdout).strip()[-400:]})
        except subprocess.TimeoutExpired:
            return json.dumps({"module": os.path.basename(m), "error": "timeout after %g s" % limit})

    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for line in ex.map(go, mods):
            print(line, flush=True)


if __name__ == "__main__":
    main()
