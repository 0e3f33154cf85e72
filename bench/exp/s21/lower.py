"""Lower one emitted TileLang module's kernels for sm_90a with check_emitted's checks (exit 1 if any failed).
usage: TOOLCHAIN_PYTHON bench/exp/s21/lower.py MODULE.py [KERNEL_SUBSTRING]"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tests/emit"))
import check_emitted as ce
ce.barrier_check_tested = True
mod = ce.import_module(sys.argv[1], "m")
if len(sys.argv) > 2:
    mod.PRIM_FUNCS = {k: v for k, v in mod.PRIM_FUNCS.items() if sys.argv[2] in k}
ce.tilelang_lower_all(mod, os.path.basename(sys.argv[1]), None)
print(f"{ce.counts['passed']} passed, {ce.counts['failed']} failed")
sys.exit(1 if ce.counts["failed"] else 0)
