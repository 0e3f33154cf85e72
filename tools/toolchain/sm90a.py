"""sm90a.py: TileLang kernels to Hopper code without a GPU.

The one recipe (docs/TOOLCHAIN.md) that validate_example.py and
tests/emit/check_emitted.py both use: lower a prim_func for an explicit
{"kind": "cuda", "arch": "sm_90a"} target inside a PassContext, then build the
CUDA source TileLang produced into an sm_90a cubin with nvcc and TileLang's
own template and CUTLASS headers.
"""
import os
import shutil
import subprocess
import tempfile

TL_TARGET = {"kind": "cuda", "arch": "sm_90a"}


def find_nvcc():
    """nvcc from CUDA_HOME/CUDA_PATH, PATH or /usr/local/cuda; None if absent."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return os.path.join(home, "bin", "nvcc")
    for p in [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]:
        if p and os.path.exists(p):
            return p
    return None


def lower(fn, target=None):
    """CUDA C++ source of prim_func fn lowered for target (sm_90a by default)."""
    import tilelang
    from tilelang import tvm

    target = target or TL_TARGET
    with tvm.transform.PassContext(opt_level=3), tvm.target.Target(target):
        src = tilelang.lower(fn, target=target).kernel_source
    if "__global__" not in src:
        raise RuntimeError("no __global__ kernel in the lowered source")
    return src


def nvcc_cubin(nvcc, src, cubin):
    """Build CUDA source src into the sm_90a cubin at path cubin; its size."""
    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH

    with tempfile.TemporaryDirectory() as d:
        cu = os.path.join(d, "k.cu")
        with open(cu, "w") as f:
            f.write(src)
        cmd = [nvcc, "--cubin", "-O3", "-std=c++20", "-gencode", "arch=compute_90a,code=sm_90a",
               "-diag-suppress", "1444", "-I" + TILELANG_TEMPLATE_PATH, "-I" + CUTLASS_INCLUDE_DIR,
               "-o", cubin, cu]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("nvcc: " + (p.stderr.strip().splitlines() or ["?"])[-1])
    return os.path.getsize(cubin)
