"""Print one kernel's lowered CUDA (sm_90a). usage: cuda.py MODULE.py KERNEL [FROM TO]"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tests/emit"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tools/toolchain"))
import check_emitted as ce, sm90a
mod = ce.import_module(sys.argv[1], "m")
name = next(k for k in mod.PRIM_FUNCS if sys.argv[2] in k)
src = sm90a.lower(mod.PRIM_FUNCS[name], mod.TARGET).splitlines()
a, b = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1, len(src))
for n in range(a, min(b, len(src)) + 1): print(n, src[n - 1])
