#!/usr/bin/env python3
"""Check the TileLang + Triton toolchain offline (no GPU needed) for Hopper.

  TileLang: lower tl_examples.py's kernels (GEMM, elementwise, row reduction)
            to CUDA C++ for {"kind": "cuda", "arch": "sm_90a"}; build device code
            with nvcc (directly, and through tilelang.compile with the tvm_ffi
            execution backend, which is what `kernel(...)` uses on a GPU).
  Triton:   compile triton_examples.py's kernels for GPUTarget("cuda", 90, 32)
            to PTX and cubin (Triton's bundled ptxas).

Prints one PASS/FAIL/SKIP line per check and a closing 'N passed, N failed'
line; exits 1 if anything failed.  --run (GPU machines only) also launches the
kernels and compares them with PyTorch.

Usage: python3 tools/toolchain/validate_example.py [--tilelang-only|--triton-only]
           [--no-nvcc] [--out DIR] [--keep-cache] [--run]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sm90a import TL_TARGET, find_nvcc, lower, nvcc_cubin  # noqa: E402

results = []  # (status, name, detail)


def report(status, name, detail=""):
    results.append(status)
    print(f"{status} {name}" + (f" ({detail})" if detail else ""), flush=True)


def check(name, fn):
    t = time.time()
    try:
        detail = fn()
    except Exception as e:  # noqa: BLE001 - every failure is a FAIL line
        msg = str(e).strip().splitlines()
        tail = msg[-1] if msg else ""
        report("FAIL", name, f"{type(e).__name__}: {tail[:400]}")
        if os.environ.get("TOOLCHAIN_VERBOSE"):
            traceback.print_exc()
        return None
    report("PASS", name, f"{time.time() - t:.2f} s" + (f"; {detail}" if detail else ""))
    return True


def find_cuobjdump():
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    try:
        import triton  # Triton's wheel carries cuobjdump
        cand = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
        return cand if os.path.exists(cand) else None
    except Exception:  # noqa: BLE001
        return None


def tilelang_checks(args, out):
    t0 = time.time()
    import tilelang
    import tl_examples
    report("PASS", "tilelang import", f"{time.time() - t0:.2f} s; tilelang {tilelang.__version__}, "
           f"tvm_ffi {_version('apache-tvm-ffi')}, torch {_torch_version()}")
    nvcc = None if args.no_nvcc else find_nvcc()
    if not args.no_nvcc and nvcc is None:
        report("FAIL", "nvcc", "not found (CUDA_HOME, PATH, /usr/local/cuda); use --no-nvcc to skip")
    sources = {}
    for name, (factory, _out_idx) in tl_examples.KERNELS.items():
        def lower_one(name=name, factory=factory):
            src = lower(factory(), TL_TARGET)
            if name == "gemm":
                assert "wgmma" in src, "GEMM did not lower to WGMMA"
                assert "tma_load" in src, "GEMM did not lower to TMA loads"
            sources[name] = src
            if out:
                with open(os.path.join(out, f"tl_{name}.cu"), "w") as f:
                    f.write(src)
            return f"{len(src)} chars of CUDA"
        check(f"tilelang lower {name} sm_90a", lower_one)
    if nvcc is None:
        if args.no_nvcc:
            report("SKIP", "tilelang nvcc", "--no-nvcc")
        return
    cuobjdump = find_cuobjdump()
    for name, src in sources.items():
        def build(name=name, src=src):
            with tempfile.TemporaryDirectory() as d:
                cubin = os.path.join(d, "k.cubin")
                detail = f"{nvcc_cubin(nvcc, src, cubin)} bytes of sm_90a cubin"
                if cuobjdump:
                    sass = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True).stdout
                    if name == "gemm":
                        assert "HGMMA" in sass, "no HGMMA (wgmma) instruction in the SASS"
                        detail += f", {sass.count('HGMMA')} HGMMA"
                if out:
                    shutil.copy(cubin, os.path.join(out, f"tl_{name}.sm_90a.cubin"))
                return detail
        check(f"tilelang nvcc {name} sm_90a", build)

    def jit_compile():
        factory, out_idx = tl_examples.KERNELS["gemm"]
        k = tilelang.compile(factory(), out_idx=out_idx, target=TL_TARGET, execution_backend="tvm_ffi")
        assert k.get_kernel_source() == sources.get("gemm", k.get_kernel_source())
        if out:
            k.export_library(os.path.join(out, "tl_gemm.tvm_ffi.so"))
        return "tvm_ffi backend, host + device built"
    check("tilelang.compile gemm sm_90a", jit_compile)

    if args.run:
        tilelang_run_checks()


def tilelang_run_checks():
    import torch
    import tilelang
    import tl_examples
    if not torch.cuda.is_available():
        report("SKIP", "tilelang run", "no CUDA device")
        return
    torch.manual_seed(0)

    def run_gemm():
        k = tilelang.compile(tl_examples.make_gemm(), out_idx=[2], target=TL_TARGET)
        a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        c = k(a, b)
        torch.testing.assert_close(c.float(), (a.float() @ b.float()), atol=1e-1, rtol=1e-2)
    check("tilelang run gemm", run_gemm)

    def run_ew():
        k = tilelang.compile(tl_examples.make_elementwise(), out_idx=[2], target=TL_TARGET)
        x = torch.randn(1024, 1024, device="cuda")
        s = torch.randn(1024, device="cuda")
        torch.testing.assert_close(k(x, s), x * s + torch.roll(x, -1, dims=1))
    check("tilelang run elementwise", run_ew)

    def run_red():
        k = tilelang.compile(tl_examples.make_rowreduce(), out_idx=[1, 2], target=TL_TARGET)
        x = torch.randn(1024, 1024, device="cuda")
        m, s = k(x)
        ref_m = x.max(dim=1).values
        torch.testing.assert_close(m, ref_m)
        torch.testing.assert_close(s, torch.exp(x - ref_m[:, None]).sum(dim=1), rtol=1e-4, atol=1e-3)
    check("tilelang run rowreduce", run_red)


def triton_checks(args, out):
    t0 = time.time()
    import triton
    from triton.backends.compiler import GPUTarget
    import triton_examples
    report("PASS", "triton import", f"{time.time() - t0:.2f} s; triton {triton.__version__}")
    target = GPUTarget("cuda", 90, 32)
    for name, spec in triton_examples.KERNELS.items():
        def comp(name=name, spec=spec):
            k = triton.compile(triton_examples.ast_source(name), target=target, options=spec["options"])
            ptx, cubin = k.asm["ptx"], k.asm["cubin"]
            assert ".target sm_90a" in ptx, "PTX is not for sm_90a"
            assert len(cubin) > 0, "empty cubin"
            if name == "matmul":
                assert "wgmma" in ptx, "matmul did not use wgmma"
                assert "cp.async" in ptx, "matmul loads were not pipelined (cp.async missing)"
            if out:
                with open(os.path.join(out, f"triton_{name}.ptx"), "w") as f:
                    f.write(ptx)
                with open(os.path.join(out, f"triton_{name}.cubin"), "wb") as f:
                    f.write(cubin)
            return f"{len(ptx)} chars PTX, {len(cubin)} bytes cubin, shared {k.metadata.shared} B"
        check(f"triton compile {name} cuda:90", comp)
    if args.run:
        import torch
        if not torch.cuda.is_available():
            report("SKIP", "triton run", "no CUDA device")
            return

        def run_add():
            x = torch.randn(100000, device="cuda")
            y = torch.randn(100000, device="cuda")
            o = torch.empty_like(x)
            triton_examples.add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, o, x.numel(), BLOCK=1024)
            torch.testing.assert_close(o, x + y)
        check("triton run add", run_add)


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:  # noqa: BLE001
        return "?"


def _torch_version():
    try:
        import torch
        return getattr(torch, "__version__", "?")
    except Exception as e:  # noqa: BLE001
        return f"unavailable ({type(e).__name__})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilelang-only", action="store_true")
    ap.add_argument("--triton-only", action="store_true")
    ap.add_argument("--no-nvcc", action="store_true", help="lower only; do not build TileLang device code")
    ap.add_argument("--out", help="write .cu/.ptx/.cubin files here")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use the normal TileLang/Triton caches instead of fresh temporary ones")
    ap.add_argument("--run", action="store_true", help="GPU only: also launch and compare with PyTorch")
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
    tmp = None
    if not args.keep_cache:
        tmp = tempfile.mkdtemp(prefix="toolchain-validate-")
        os.environ["TILELANG_CACHE_DIR"] = os.path.join(tmp, "tilelang")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    try:
        if not args.triton_only:
            try:
                tilelang_checks(args, args.out)
            except Exception as e:  # noqa: BLE001 - import failures and the like
                report("FAIL", "tilelang", f"{type(e).__name__}: {str(e).strip()[-400:]}")
        if not args.tilelang_only:
            try:
                triton_checks(args, args.out)
            except Exception as e:  # noqa: BLE001
                report("FAIL", "triton", f"{type(e).__name__}: {str(e).strip()[-400:]}")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    passed, failed = results.count("PASS"), results.count("FAIL")
    print(f"toolchain: {time.time() - t0:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
