"""Run one emitted module's run() once on its random inputs and compare with
its reference() (under compute-sanitizer, once is enough and the timing loop
would take minutes).  usage: python3 bench/race_one.py MODULE.py"""
import importlib.util
import sys

import torch

spec = importlib.util.spec_from_file_location("mod", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
args = mod.random_inputs()
out = mod.run(*args)
ref = mod.reference(*args)
torch.cuda.synchronize()
ok, err, scale = mod.compare(out, ref)
print(f"{sys.argv[1]}: max abs error {err:.3g} (max |reference| {scale:.3g}): {'ok' if ok else 'MISMATCH'}")
sys.exit(0 if ok else 1)
