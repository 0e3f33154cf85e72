#!/usr/bin/env python3
"""Check the Python modules `tilesmith opt` emits, for every example instance.

usage: python3 tests/emit/check_emitted.py ./tilesmith [-k SUBSTRING] [--targets tilelang,triton]
           [--small-only] [--no-prims] [--compile-all] [--no-compile] [--nvcc]
           [--interpret] [--run] [--jobs N] [--keep DIR] [--prebuilt DIR]

With the pinned toolchain (tools/toolchain/install_here.sh, docs/TOOLCHAIN.md)
run it with that venv's python, and with nvcc on PATH for --nvcc.

1. For every concrete instance of examples/*.lean (the definitions that
   `tilesmith check` elaborates with no sizes), for the small instances
   of the generic definitions in SMALL below and for every definition of
   tests/prims.lean (one per primitive op; --no-prims leaves them out), and
   for each target, runs
   `tilesmith opt ... -o DIR/NAME.py` and byte-compiles the module
   (`py_compile`).  Also checks what the module must contain: one kernel
   function per kernel of `tilesmith tiles`, run(), reference(), __main__.
2. When Triton is importable, compiles every Triton kernel of the small
   instances (of every instance with --compile-all) for CUDA capability 9.0
   WITHOUT a GPU (triton.compile on an ASTSource with an explicit
   GPUTarget("cuda", 90, 32)); when TileLang is importable, lowers every
   TileLang kernel of those instances for sm_90a (tilelang.lower with an
   explicit target, docs/TOOLCHAIN.md's recipe) and, with --nvcc, builds
   its CUDA source into an sm_90a cubin with nvcc.
   A missing toolchain is reported loudly and its checks are counted as
   skipped, not passed.
3. With --interpret, runs each small instance's Triton module compiled for
   float32 storage on the CPU, in Triton's interpreter
   (tests/emit/interpret.py): its output against its own float32 PyTorch
   reference on random inputs.  No GPU needed: this is the numerical check
   of the kernels' indexing, masks, loops and split/combine structure here
   and in CI (the interpreter's bfloat16 is not faithful, so f32 only).
4. With the toolchain, runs a few modules as `python3 MODULE.py
   --compile-only sm_90a` (COMPILE_ONLY below): the module's own GPU-less
   build of every kernel, as a user runs it.
5. With --run, on a machine with a CUDA GPU, runs each small instance's
   module (`python3 MODULE.py`: run() against reference() on random inputs,
   for bf16 and f32 storage) and counts a non-zero exit as a failure.

--keep DIR writes the modules and a manifest into DIR; --prebuilt DIR skips
step 1 and checks the modules a --keep run left there (for a GPU machine
that has Triton but not tilesmith's build).  On the H200 machine (torch and
Triton installed, TileLang carried as the pinned wheels, stripped with
tools/toolchain/strip_wheel.py) that was:
    python3 tests/emit/check_emitted.py ./tilesmith --small-only --keep .emitcheck   # here
    python3 tests/emit/check_emitted.py x --prebuilt .emitcheck --no-compile --run --jobs 15   # there

One line per check, then "N passed, M failed, K skipped"; exit status 1 if
anything failed.
"""

import argparse
import concurrent.futures
import importlib.util
import os
import py_compile
import re
import subprocess
import sys
import tempfile
import traceback
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "toolchain"))
import sm90a  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import mixed_pipelines  # noqa: E402

# small instances of the generic definitions (the same as tests/crosscheck.py)
SMALL = [
    ("examples/attention.lean", "attention", "B=2,H=2,N=8,D=4"),
    ("examples/causal_attention.lean", "causalAttention", "B=2,H=2,N=8,D=4"),
    ("examples/softcap_window_attention.lean", "softcapWindowAttention", "B=2,H=2,N=8,D=4,W=3"),
    ("examples/gqa_decode.lean", "gqaDecode", "B=2,H=4,Hkv=2,S=8,D=4"),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", "M=4,K=8,N=6"),
    ("examples/swiglu_mlp.lean", "swigluMlp", "M=4,D=8,F=12"),
    ("examples/swiglu_mlp.lean", "gatedMlp", "M=2,D=8,F=8"),
    ("examples/matmul_large_k.lean", "matmulLargeK", "M=4,K=64,N=4"),
    ("examples/softmax.lean", "rowSoftmax", "M=4,N=16"),
    ("examples/rmsnorm.lean", "rowRmsnorm", "M=4,N=16"),
    ("examples/layernorm.lean", "rowLayernorm", "M=4,N=16"),
    ("examples/bias_gelu_residual.lean", "biasGeluResidual", "M=4,N=16"),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=6,D=8,V=10"),
    ("examples/transformer_block.lean", "transformerBlock", "B=2,N=8,D=16,H=4,F=24"),
    ("examples/mlp_classifier.lean", "residualMlp", "B=4,I=6,D=8,L=3,C=5"),
    ("examples/mlp_classifier.lean", "residualMlpLoss", "B=4,I=6,D=8,L=3,C=5"),
    ("examples/transformer_lm.lean", "decoderBlock", "B=2,N=8,D=16,H=4,F=24"),
    ("examples/transformer_lm.lean", "transformerLM", "B=2,N=8,V=11,D=16,H=2,F=24,L=2"),
    ("examples/transformer_lm.lean", "transformerLMLoss", "B=2,N=8,V=11,D=16,H=2,F=24,L=2"),
    # sizes that are not multiples of the tiles, and larger reductions
    ("examples/softmax.lean", "rowSoftmax", "M=37,N=300"),
    ("examples/attention.lean", "attention", "B=1,H=3,N=130,D=72"),
    # sizes at which the search streams and splits (key loops carrying the
    # online-softmax state, split-KV and split-K with a combine, masked
    # tiles skipped, vocabulary tiles): what --interpret checks numerically
    ("examples/attention.lean", "attention", "B=1,H=1,N=1024,D=16"),
    ("examples/causal_attention.lean", "causalAttention", "B=1,H=1,N=512,D=16"),
    ("tests/search/programs.lean", "dropMaskAttention", "B=1,H=1,N=512,D=16"),
    ("tests/search/programs.lean", "sinkWindowAttention", "B=1,H=1,N=512,D=16,W=128,S=4"),
    # a mask of integer quotients (Lean's Int division in both emitters)
    ("tests/search/programs.lean", "chunkedAttention", "B=1,H=2,N=300,D=16,C=48"),
    ("tests/search/programs.lean", "chunkedAttention", "B=1,H=1,N=1000,D=16,C=256"),
    ("tests/prims.lean", "prim_idiv", ""),
    ("tests/prims.lean", "prim_idiv_nat", ""),
    ("examples/softcap_window_attention.lean", "softcapWindowAttention", "B=1,H=1,N=512,D=16,W=100"),
    ("examples/gqa_decode.lean", "gqaDecode", "B=1,H=4,Hkv=2,S=4096,D=16"),
    ("examples/matmul_large_k.lean", "matmulLargeK", "M=16,K=32768,N=16"),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", "M=64,K=2048,N=64"),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=16,D=32,V=4096"),
    ("examples/softmax.lean", "rowSoftmax", "M=4,N=40000"),
    ("tests/search/programs.lean", "lnRows", "M=1,N=100000"),
    # layer norm's mean and variance kept lane by lane (lower_plan.c's
    # lane-wise Welford), in one block a row and split across blocks
    ("tests/search/programs.lean", "lnRows", "M=4,N=32768"),
    ("tests/search/programs.lean", "lnRows", "M=1,N=65536"),
    # an input's tile read several times in a product kernel (held in shared
    # memory in the storage type): elementwise NaN tests and a reduction of it
    ("tests/emit/shared_tiles.lean", "reluScaled", "M=256,K=1024,N=512"),
    ("tests/emit/shared_tiles.lean", "maxScaled", "M=256,K=1024,N=512"),
    ("tests/emit/shared_tiles.lean", "softmaxOf", "M=256,N=4096,D=128"),
    # a row vector loaded before the product loop and read in it: a rank-1
    # fragment there once lowered to a barrier half the block skips
    ("tests/emit/shared_tiles.lean", "rowMix", "M=512,K=512,N=512"),
    # reductions over the rows of a product's result (axis 0): the reduced
    # tile reads the accumulator transposed, through shared memory
    ("tests/emit/shared_tiles.lean", "colSumMax", "M=100,K=37,N=300"),
    ("tests/emit/shared_tiles.lean", "colLogSoftmaxMm", "M=100,K=37,N=300"),
    ("tests/emit/shared_tiles.lean", "colLogsumexp", "M=1000,K=24,N=45"),
    # a product's columns fewer than 16 and reduced as rows (a softmax over
    # 10 or 4 classes): the tile is padded to 16 and masked
    ("tests/emit/small_products.lean", "classProbs", "M=37,K=64,N=10"),
    ("tests/emit/small_products.lean", "headMix", "B=3,H=3,D=4"),
    # one row (M = 1): thinner than tl.dot takes, a broadcast product in Triton
    ("tests/emit/small_products.lean", "rowTimesMatrix", "K=256,N=96"),
    # a product's operand computed in its kernel as a streamed state
    ("tests/emit/small_products.lean", "rightAssocProduct", "N=37,D=8,E=5"),
    ("tests/emit/small_products.lean", "rightAssocProduct", "N=1000,D=16,E=24"),
    # exponents scaled by a product of positive non-constant factors
    ("tests/emit/small_products.lean", "rowScaledSoftmax", "M=4,N=40000"),
    ("tests/emit/small_products.lean", "qkNormAttention", "B=1,H=2,N=300,D=32"),
    # ... split across blocks: the row's factor stored beside the partials
    ("tests/emit/small_products.lean", "rowScaledSoftmax", "M=2,N=100000"),
    ("tests/emit/small_products.lean", "qkNormAttention", "B=1,H=1,N=1024,D=16"),
    ("tests/emit/small_products.lean", "twoExp", "M=2,N=100000"),
    ("examples/swiglu_mlp.lean", "swigluMlp", "M=1,D=64,F=96"),
    # row statistics of a product's operand deferred past its K loop
    # (src/tile/defer.c): the tile itself, or a fragment of its own
    ("tests/emit/small_products.lean", "l1Matmul", "M=37,K=100,N=20"),
    ("tests/emit/small_products.lean", "maxScaledMatmul", "M=300,K=1000,N=200"),
    ("tests/emit/small_products.lean", "minShiftedMatmul", "M=37,K=300,N=20"),
    ("tests/emit/small_products.lean", "twoSumMatmul", "M=300,K=1000,N=200"),
    # Lean names Python cannot take as they are, and names the kernels use
    # (tests/emit/check_run_args.py checks run()'s side of them)
    ("tests/emit/awkward_names.lean", "awkwardNames", ""),
    ("tests/emit/awkward_names.lean", "referenceNames", ""),
    ("tests/emit/awkward_names.lean", "launchNames", ""),
]

# instances at sizes whose plans differ from the small ones' (lowered and
# built in the storage type only, like the examples' own instances):
# qk-norm attention's forward at a training size has a row layout beside a
# pipelined loop that TileLang once could not lay out (no annotation) or laid
# out wrong (annotation with T.copy)
LARGE = [
    ("tests/emit/small_products.lean", "qkNormAttention", "B=2,H=8,N=2048,D=128"),
    # attention at D = 256: 64 x 256 output tiles on one warpgroup
    ("tests/search/programs.lean", "softcapAttention", "B=4,H=8,N=4096,D=256"),
    # an input named like the kernel's staged row state (S0_s): it once
    # took that name in the kernel, where the shared copy shadowed it
    ("tests/emit/awkward_names.lean", "stagedNames", ""),
    # statistics deferred past a product's pipelined K loop, a fragment of
    # their own (D<n>) beside the loop's T.copy loads
    ("tests/emit/small_products.lean", "minShiftedMatmul", "M=4096,K=4096,N=4096"),
    ("tests/emit/small_products.lean", "twoSumMatmul", "M=4096,K=4096,N=4096"),
]

# instances also emitted in Triton's tl.exp form (TS_TR_EXP2=0; the exp2 form
# is the default) and run in the interpreter with --interpret: a temperature
# in a streamed key loop, a split one with its combine, a masked one
EXP2_INSTANCES = [
    ("examples/attention.lean", "attention", "B=1,H=1,N=1024,D=16"),
    ("examples/gqa_decode.lean", "gqaDecode", "B=1,H=4,Hkv=2,S=4096,D=16"),
    ("examples/causal_attention.lean", "causalAttention", "B=1,H=1,N=512,D=16"),
    ("tests/search/programs.lean", "tempAttention", "B=2,N=300,D=16"),
]

# instances also emitted with TileLang's staged stores (TS_TL_STAGE_STORE=1: a
# product kernel's final tile through shared memory and a TMA store, the
# tilelang-staged variant bench/prepare.sh STAGED=1 writes), lowered for
# sm_90a with --compile-all; each must take the staged path (Ost<n>)
STAGED_INSTANCES = [
    ("examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", None),
    ("examples/swiglu_mlp.lean", "swigluMlp", "M=2048,D=1024,F=2816"),
    ("examples/transformer_block.lean", "transformerBlock", "B=2,N=512,D=512,H=8,F=1408"),
    # inputs named like the kernel's staged row state and staged store tile
    ("tests/emit/awkward_names.lean", "stagedNames", None),
]

# instances also emitted with Triton's tensor descriptors (TS_TR_TMA=1, the
# schedule's copy=1: tile loads and unmasked stores through TMA; the
# triton-tma variant of bench/prepare.sh SCHEDULES="tma:copy=1"): in float32
# run by Triton's interpreter against the reference (full and partial tiles,
# a split product, a decode's split keys), in bf16 built for sm_90a with
# --compile-all; each must load through a descriptor
TMA_SMALL = [
    ("examples/attention.lean", "attention", "B=1,H=2,N=256,D=16"),
    ("examples/causal_attention.lean", "causalAttention", "B=1,H=1,N=256,D=16"),
    ("examples/rmsnorm_matmul.lean", "rmsnormMatmul", "M=64,K=256,N=128"),
    ("examples/matmul_large_k.lean", "matmulLargeK", "M=64,K=8192,N=64"),
    ("examples/gqa_decode.lean", "gqaDecode", "B=1,H=4,Hkv=2,S=4096,D=16"),
    ("tests/emit/awkward_names.lean", "tmaNames", None),
]
TMA_BIG = [
    ("examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", None),
    ("examples/swiglu_mlp.lean", "swigluMlp", "M=2048,D=1024,F=2816"),
    ("examples/attention.lean", "attention_4k", None),
    ("examples/transformer_block.lean", "transformerBlock", "B=2,N=512,D=512,H=8,F=1408"),
    ("examples/linear_cross_entropy.lean", "linearCrossEntropy", "M=1024,D=512,V=8192"),
]

# modules run as `python3 MODULE.py --compile-only sm_90a` (the module's own
# GPU-less build, as a user would run it), with the toolchain installed
COMPILE_ONLY = ["attention.lean:attention[B=2,H=2,N=8,D=4]:bf16",
                "transformer_lm.lean:transformerLMLoss[B=2,N=8,V=11,D=16,H=2,F=24,L=2]:bf16"]

counts = {"passed": 0, "failed": 0, "skipped": 0}


def report(status, what, detail=""):
    counts[status] += 1
    word = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}[status]
    print(f"{word} {what}{'  ' + detail if detail else ''}", flush=True)


def concrete_instances(tool, paths):
    out = []
    for path in paths:
        r = subprocess.run([tool, "check", path], cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            report("failed", f"check {path}", r.stderr.strip()[:500])
            continue
        for line in r.stdout.splitlines():
            if line and not line[0].isspace() and ":" not in line:
                out.append((path, line.strip(), ""))
    return out


def kernel_count(tool, path, entry, sizes, dtype, env=None):
    args = [tool, "tiles", path, "--entry", entry, "--dtype", dtype] + (["--size", sizes] if sizes else [])
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=env)
    return len(re.findall(r"^kernel ", r.stdout, re.M)) if r.returncode == 0 else None


def emit_checked(tool, path, entry, sizes, target, dtype, out, label, env=None, mark=None, tag=None):
    """opt writes the module (with env's settings): it compiles as Python, has
    as many kernel functions as tiles lists (under the same settings), run(),
    reference() and __main__, and mark where a variant must show its form.
    One line of the report; True when it passed."""
    args = [tool, "opt", path, "--entry", entry, "--dtype", dtype, "--target", target, "-o", out]
    if sizes:
        args += ["--size", sizes]
    environ = dict(os.environ, **(env or {}))
    r = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, env=environ)
    if r.returncode != 0:
        report("failed", f"opt {target} {label}", r.stderr.strip()[:500])
        return False
    try:
        py_compile.compile(out, doraise=True)
    except py_compile.PyCompileError as e:
        report("failed", f"py_compile {target} {label}", str(e)[:500])
        return False
    text = open(out).read()
    nk = kernel_count(tool, path, entry, sizes, dtype, environ)
    deco = "@T.prim_func" if target == "tilelang" else "@triton.jit"
    problems = []
    if nk is None or text.count(deco) != nk:
        problems.append(f"{text.count(deco)} kernel functions, tiles says {nk}")
    for need in ("\ndef run(", "\ndef reference(", '\nif __name__ == "__main__":'):
        if need not in text:
            problems.append(f"no {need.strip()}")
    if mark and not re.search(mark, text):
        problems.append(f"no {tag} form")
    report("failed" if problems else "passed", f"emit {target} {label}", "; ".join(problems))
    return not problems


def import_module(path, name):
    """Import an emitted module; with no torch here, a stub stands in for it
    (at import, torch is used only for the dtypes of run()'s argument table;
    the stub answers any attribute with its name)."""
    if importlib.util.find_spec("torch") is None and "torch" not in sys.modules:
        stub = types.ModuleType("torch")
        stub.__getattr__ = lambda attr: "torch." + attr
        sys.modules["torch"] = stub
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


SM90_SHARED = 232448  # bytes of shared memory an H100/H200 block may ask for (227 KiB)


def triton_compile_all(mod, label):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", 90, 32)
    for fn, sig, grid, warps, stages in mod.TRITON_KERNELS:
        what = f"triton sm_90 {label} {fn.__name__}"
        try:
            # specialized as the JIT specializes torch's allocations (16-byte
            # aligned pointers): the shared memory the GPU will be asked for
            attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(sig))}
            src = ASTSource(fn=fn, signature=dict(sig), constexprs={}, attrs=attrs)
            options = {"num_warps": warps, **({"num_stages": stages} if stages else {})}
            k = triton.compile(src, target=target, options=options)
            ok = bool(k.asm.get("cubin")) if hasattr(k, "asm") else True
            shared = k.metadata.shared
            if ok and shared > SM90_SHARED:
                report("failed", what, f"asks for {shared} bytes of shared memory; an sm_90 block has {SM90_SHARED}")
            else:
                report("passed" if ok else "failed", what, f"{shared} bytes of shared memory" if ok else "no cubin")
        except Exception as e:  # noqa: BLE001 - any compiler error is a failure
            report("failed", what, f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:300] if str(e).strip() else ''}")


# CUDA as TileLang 0.1.15 lowered the rowMix kernel before the fix (cut
# down), and the same with the barrier outside the branch
HANGS = """for (int k = 0; k < 4; ++k) {
  if ((((int)threadIdx.x) >> 6) == 0) {
    for (int i = 0; i < 8; ++i) {
      A_local[i] = X2[0] * x[i];
      __syncthreads();
    }
  }
  __syncthreads();
}"""
FINISHES = HANGS.replace("      __syncthreads();\n", "")
barrier_check_tested = False

# rows of a fragment reduced one after another by the whole block (what
# TileLang 0.1.15 made of mlp_digits' RMSNorm over 64 rows of 256 before
# the emitter laid such fragments out a row per warp), and the same rows
# reduced within warps
ROWS_BY_BLOCK = """  #pragma unroll
  for (int i_2 = 0; i_2 < 64; ++i_2) {
    R2_clear[i_2] = 0x0p+0f/*0.000000e+00*/;
    #pragma unroll
    for (int rv = 0; rv < 2; ++rv) {
      R2_clear[i_2] = (R2_clear[i_2] + E1[((i_2 * 2) + rv)]);
    }
    __syncthreads();
    R2_clear[i_2] = tl::AllReduce<tl::SumOp, 128, 1, 0, tl::NamedBarrier<128>>::run(R2_clear[i_2], (&(((float*)workspace)[0])));
  }"""
ROWS_BY_WARP = ROWS_BY_BLOCK.replace("SumOp, 128, 1", "SumOp, 32, 1")


def rowwise_block_reductions(src):
    """Lines (1-based) of lowered CUDA where a block-wide AllReduce (over
    more than 32 threads) sits inside an unrolled loop of two or more trips:
    rows reduced one after another by the whole block, each behind barriers,
    where a warp per row needs none."""
    out, loops, depth, unroll = [], [], 0, False
    for n, line in enumerate(src.splitlines(), 1):
        s = line.strip()
        m = re.match(r"for \(int \w+ = 0; \w+ < (\d+); \+\+\w+\) \{", s)
        if m:
            loops.append((depth, unroll and int(m.group(1)) >= 2))
        unroll = s.startswith("#pragma unroll")
        for threads, scale in re.findall(r"AllReduce<tl::\w+, (\d+), (\d+)", s):
            if int(threads) * int(scale) > 32 and any(u for _, u in loops):
                out.append(n)
        depth += s.count("{") - s.count("}")
        while loops and depth <= loops[-1][0]:
            loops.pop()
    return out


def pipelined_copy(body):
    """A T.copy inside a T.Pipelined loop of a kernel's body: TileLang then
    splits the block into a producer and consumers."""
    loops = []
    for line in body.splitlines():
        ind = len(line) - len(line.lstrip())
        while loops and line.strip() and ind <= loops[-1]:
            loops.pop()
        if re.match(r"\s*for .* in T\.Pipelined\(", line):
            loops.append(ind)
        elif loops and "T.copy(" in line:
            return True
    return False


PIPELINED_COPY = """    with T.Kernel(16, 128, 1, threads=256) as (bx, by, bz):
        for k in T.Pipelined(64, num_stages=3):
            T.copy(x[0:128, 0:64], X2)
        T.copy(y[0:128, 0:64], Y2)
"""


def fragment_layouts_wrong(src):
    """The emitter's T.annotate_layout fragments of a module's source that
    are not a one-to-one map of the fragment's elements onto (thread, local
    index) with thread < the kernel's threads and index < elements/threads:
    a wrong layout would lower without complaint and compute garbage.  Also
    any annotation in a kernel whose pipelined loop loads by T.copy: its
    threads are then split into producer and consumers, and such a kernel
    (rmsnorm_matmul_16k at 128 x 256) left 4.5% of its outputs unwritten
    on an H100."""
    bad = []
    for k in re.finditer(r"T\.Kernel\([^)]*threads=(\d+)\)(.*?)(?=\n@T\.prim_func|\nPRIM_FUNCS)", src, re.S):
        threads = int(k.group(1))
        if "T.annotate_layout" in k.group(2) and pipelined_copy(k.group(2)):
            bad.append("(a layout annotated beside T.copy in a T.Pipelined loop)")
        for a in re.finditer(r"(\w+): T\.Fragment\(\((\d+), (\d+)\), forward_thread_fn=(lambda i, j: .*?), "
                             r"forward_index_fn=(lambda i, j: .*?)\)(?=[,}])", k.group(2)):
            rows, cols = int(a.group(2)), int(a.group(3))
            thread, index = eval(a.group(4)), eval(a.group(5))  # noqa: S307 - the emitter's own lambdas
            per = rows * cols // threads
            seen = {(thread(i, j), index(i, j)) for i in range(rows) for j in range(cols)}
            if len(seen) != rows * cols or any(not (0 <= t < threads and 0 <= x < per) for t, x in seen):
                bad.append(a.group(1))
    return bad


MIXED = """
@T.prim_func
def k0_mixed(
    x: T.Tensor((64, 256), "bfloat16"),
):
    with T.Kernel(1, 1, 1, threads=256) as (bx, by, bz):
        X = T.alloc_shared((64, 64), "bfloat16")
        A = T.alloc_shared((64, 64), "bfloat16")
        for k in T.Pipelined(4, num_stages=3):
            T.copy(x[0:64, (k * 64):(k * 64) + 64], X)
        for k in T.Pipelined(4, num_stages=3):
            for i, j in T.Parallel(64, 64):
                A[i, j] = T.Cast("bfloat16", (T.Cast("float32", x[i, ((k * 64) + j)]) * T.float32(2)))

PRIM_FUNCS = {}
"""


def tilelang_lower_all(mod, label, nvcc):
    """Lower every prim_func for sm_90a and search the CUDA for a barrier that
    only some threads reach (the module's _ts_divergent_barriers, itself
    checked once on HANGS and FINISHES); with nvcc, also build the CUDA source
    into an sm_90a cubin (tools/toolchain/sm90a.py, docs/TOOLCHAIN.md)."""
    global barrier_check_tested
    # the module's helpers carry a prefix no Lean name in it starts with
    # (`__ts_` when a parameter is called `_ts_check`)
    divergent = next(getattr(mod, n) for n in vars(mod) if n.endswith("ts_divergent_barriers"))
    if not barrier_check_tested:
        barrier_check_tested = True
        found = (divergent(HANGS), divergent(FINISHES))
        report("passed" if found == ([5], []) else "failed", "tilelang: the divergent-barrier search",
               f"found {found}, expected ([5], [])")
        found = (rowwise_block_reductions(ROWS_BY_BLOCK), rowwise_block_reductions(ROWS_BY_WARP))
        report("passed" if found == ([9], []) else "failed", "tilelang: the row-by-row block reduction search",
               f"found {found}, expected ([9], [])")
        after = PIPELINED_COPY.replace("            T.copy(x[0:128, 0:64], X2)\n", "            pass\n")
        found = (pipelined_copy(PIPELINED_COPY), pipelined_copy(PIPELINED_COPY.replace("T.Pipelined", "T.serial")),
                 pipelined_copy(after))
        report("passed" if found == (True, False, False) else "failed",
               "tilelang: the search for T.copy in a pipelined loop", f"found {found}, expected (True, False, False)")
        plain = MIXED.replace('T.Cast("bfloat16", (T.Cast("float32", x[i, ((k * 64) + j)]) * T.float32(2)))',
                              "x[i, ((k * 64) + j)]")
        found = (mixed_pipelines(MIXED), mixed_pipelines(plain))
        report("passed" if found == (["k0_mixed"], []) else "failed",
               "tilelang: the search for a T.copy loop beside a thread-filled one", f"found {found}")
    mixed = mixed_pipelines(open(mod.__file__).read())
    report("failed" if mixed else "passed", f"tilelang {label}: no kernel mixes T.copy and thread-filled loops",
           f"{mixed}" if mixed else "")
    wrong = fragment_layouts_wrong(open(mod.__file__).read())
    report("failed" if wrong else "passed", f"tilelang {label}: fragment layouts one-to-one",
           f"not one-to-one: {wrong}" if wrong else "")
    for name, fn in mod.PRIM_FUNCS.items():
        what = f"tilelang sm_90a {label} {name}"
        try:
            src = sm90a.lower(fn, mod.TARGET)
            bad = divergent(src)
            if bad:
                raise RuntimeError(f"a __syncthreads() inside a branch on threadIdx (CUDA line {bad[0]}): it would hang")
            rows = rowwise_block_reductions(src)
            if rows:
                raise RuntimeError(f"rows reduced one by one by the whole block (CUDA line {rows[0]}): "
                                   "a fragment the emitter should lay out a row per warp")
            detail = f"{len(src)} chars of CUDA"
            if nvcc:
                with tempfile.TemporaryDirectory() as d:
                    size = sm90a.nvcc_cubin(nvcc, src, os.path.join(d, "k.cubin"))
                detail += f", {size} bytes of sm_90a cubin"
            report("passed", what, detail)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            report("failed", what, f"{type(e).__name__}: {msg[-1][:300] if msg else ''}")
            if os.environ.get("EMIT_VERBOSE"):
                traceback.print_exc()


def have(module):
    try:
        __import__(module)
        return True
    except Exception as e:  # noqa: BLE001
        print(f"note: cannot import {module}: {type(e).__name__}: {e}", flush=True)
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("-k", default="")
    ap.add_argument("--targets", default="tilelang,triton")
    ap.add_argument("--compile-all", action="store_true")
    ap.add_argument("--nvcc", action="store_true", help="also build each lowered TileLang kernel with nvcc")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("--interpret", action="store_true",
                    help="run the small float32 Triton modules in Triton's CPU interpreter against their reference")
    ap.add_argument("--no-prims", action="store_true", help="leave out tests/prims.lean's definitions")
    ap.add_argument("--no-compile", action="store_true", help="skip step 2 (offline compilation)")
    ap.add_argument("--small-only", action="store_true", help="leave out the examples' full-size instances")
    ap.add_argument("--jobs", type=int, default=4, help="modules run at once with --run")
    ap.add_argument("--require-toolchain", action="store_true",
                    help="a missing TileLang or Triton is a failure, not a skip (CI sets this)")
    ap.add_argument("--keep", default=None, help="write the modules (and manifest.tsv) here")
    ap.add_argument("--prebuilt", default=None, help="check the modules listed in DIR/manifest.tsv (no tilesmith run)")
    a = ap.parse_args()
    tool = os.path.abspath(a.tool)
    targets = [t for t in a.targets.split(",") if t]
    out_dir = a.keep or tempfile.mkdtemp(prefix="tilesmith-emit-")
    os.makedirs(out_dir, exist_ok=True)

    toolchain = {"triton": have("triton"), "tilelang": have("tilelang")}
    for t in targets:
        if not toolchain[t]:
            print(f"!!! {t} is NOT importable here: its kernels are NOT compiled, only byte-compiled !!!", flush=True)

    examples = sorted(os.path.join("examples", n) for n in os.listdir(os.path.join(ROOT, "examples"))
                      if n.endswith(".lean"))
    instances = [] if a.prebuilt or a.small_only else [(p, e, s, False) for p, e, s in concrete_instances(tool, examples)]
    instances += [] if a.prebuilt or a.small_only else [(p, e, s, False) for p, e, s in LARGE]
    instances += [(p, e, s, True) for p, e, s in SMALL]
    if not a.no_prims and not a.prebuilt:
        instances += [(p, e, s, True) for p, e, s in concrete_instances(tool, [os.path.join("tests", "prims.lean")])]
    instances = [x for x in instances if a.k in f"{x[0]}:{x[1]}"]
    gpu = False
    if a.run:
        try:
            import torch

            gpu = torch.cuda.is_available()
        except Exception:  # noqa: BLE001
            gpu = False
        if not gpu:
            print("!!! --run: no CUDA GPU here: the modules are NOT run !!!", flush=True)

    todo = []  # (module path, target, label, small, dtype)
    if a.prebuilt:
        with open(os.path.join(a.prebuilt, "manifest.tsv")) as f:
            for line in f:
                p, target, label, small, dtype = line.rstrip("\n").split("\t")
                if target in targets and a.k in label:
                    todo.append((os.path.join(a.prebuilt, p), target, label, small == "1", dtype))
    for n, (path, entry, sizes, small) in enumerate([] if a.prebuilt else instances):
        for target in targets:
            for dtype in (["bf16", "f32"] if small else ["bf16"]):
                label = f"{os.path.basename(path)}:{entry}{'[' + sizes + ']' if sizes else ''}:{dtype}"
                mod_name = f"m{n}_{target}_{dtype}_{re.sub(r'[^A-Za-z0-9]', '_', entry)}"
                out = os.path.join(out_dir, mod_name + ".py")
                if emit_checked(tool, path, entry, sizes, target, dtype, out, label):
                    todo.append((out, target, label, small, dtype))
    # modules emitted with a target's variant set by its environment variable,
    # each required to show the variant's mark.  Triton's tl.exp form
    # (TS_TR_EXP2=0; exp2 with the softmax temperature folded into the log2(e)
    # multiplier is the default, interpreted with the others): interpreted
    # too, so both forms are checked.  TileLang's staged stores:
    # lowered for sm_90a with --compile-all.  Triton's tensor descriptors:
    # interpreted in float32, built in bf16.
    variants = [("triton", "f32", "exp", "TS_TR_EXP2=0", r"tl\.exp\(", True, EXP2_INSTANCES),
                ("tilelang", "bf16", "staged", "TS_TL_STAGE_STORE=1", r"T\.copy\(Ost[0-9]+, ", False, STAGED_INSTANCES),
                ("triton", "f32", "tma", "TS_TR_TMA=1", r"_tma[0-9]+\.load\(", True, TMA_SMALL),
                ("triton", "bf16", "tmabf", "TS_TR_TMA=1", r"_tma[0-9]+\.load\(", False, TMA_BIG)]
    for target, dtype, tag, setting, mark, small, insts in variants:
        var, value = setting.split("=")
        for n, (path, entry, sizes) in enumerate([] if a.prebuilt else insts):
            label = f"{os.path.basename(path)}:{entry}[{sizes or ''}]:{dtype}:{tag}"
            out = os.path.join(out_dir, f"{tag}{n}_{target}_{re.sub(r'[^A-Za-z0-9]', '_', entry)}.py")
            if emit_checked(tool, path, entry, sizes, target, dtype, out, label, {var: value}, mark, tag):
                todo.append((out, target, label, small, dtype))
    with open(os.path.join(out_dir, "manifest.tsv"), "w") as f:
        for out, target, label, small, dtype in todo:
            f.write(f"{os.path.relpath(out, out_dir)}\t{target}\t{label}\t{int(small)}\t{dtype}\n")

    runs = []
    nvcc = sm90a.find_nvcc() if a.nvcc else None
    if a.nvcc and not nvcc:
        print("!!! --nvcc: no nvcc found: TileLang kernels are only lowered !!!", flush=True)
    for n, (out, target, label, small, dtype) in enumerate(todo):
        mod_name = f"emitted_{n}"
        if (small or a.compile_all) and dtype == "bf16" and not a.no_compile:
            if not toolchain[target]:
                report("failed" if a.require_toolchain else "skipped", f"{target} compile {label}",
                       f"{target} not installed")
            else:
                try:
                    mod = import_module(out, mod_name)
                    if target == "triton":
                        triton_compile_all(mod, label)
                    else:
                        tilelang_lower_all(mod, label, nvcc)
                except Exception as e:  # noqa: BLE001
                    report("failed", f"import {target} {label}", f"{type(e).__name__}: {e}"[:500])
                    traceback.print_exc()
        if a.run and small:
            if not gpu or not toolchain[target]:
                report("skipped", f"run {target} {label}", "no GPU" if not gpu else f"no {target}")
            else:
                runs.append((out, target, label))

    for out, target, label, small, dtype in todo:
        if label not in COMPILE_ONLY or a.no_compile or not toolchain[target]:
            continue
        rr = subprocess.run([sys.executable, out, "--compile-only", "sm_90a"], capture_output=True, text=True,
                            timeout=900)
        built = [x for x in rr.stdout.splitlines() if x.startswith("built ")]
        want = open(out).read().count("@T.prim_func" if target == "tilelang" else "@triton.jit")
        ok = rr.returncode == 0 and len(built) == want
        report("passed" if ok else "failed", f"{target} --compile-only {label}",
               f"{len(built)} of {want} kernels built" + ("" if ok else ": " + (rr.stdout + rr.stderr)[-400:]))
    if a.interpret:
        jobs = [(out, label) for out, target, label, small, dtype in todo
                if target == "triton" and small and dtype == "f32"]
        if not toolchain["triton"]:
            for out, label in jobs:
                report("failed" if a.require_toolchain else "skipped", f"interpret triton {label}", "triton not installed")
            jobs = []
        label_of = {os.path.abspath(out): label for out, label in jobs}
        n = max(1, a.jobs)
        chunks = [[out for out, _ in jobs[i::n]] for i in range(n)]

        def interpret(chunk):
            if not chunk:
                return ""
            rr = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "emit", "interpret.py")] +
                                [os.path.abspath(c) for c in chunk], capture_output=True, text=True, timeout=1800)
            return rr.stdout

        seen = set()
        with concurrent.futures.ThreadPoolExecutor(max_workers=n) as pool:
            for text in pool.map(interpret, chunks):
                for line in text.splitlines():
                    m = re.match(r"^(ok|FAIL)\s+(\S+)\s*(.*)$", line)
                    if not m or m.group(2) not in label_of:
                        continue
                    seen.add(m.group(2))
                    report("passed" if m.group(1) == "ok" else "failed", f"interpret triton {label_of[m.group(2)]}",
                           m.group(3))
        for path, label in label_of.items():
            if path not in seen:
                report("failed", f"interpret triton {label}", "the interpreter process died before it")

    def run_one(job):
        out, target, label = job
        try:
            rr = subprocess.run([sys.executable, out], capture_output=True, text=True, timeout=600)
            lines = (rr.stdout + rr.stderr).strip().splitlines()
            result = [x for x in lines if "max abs error" in x or x.startswith("time:")]
            tail = " | ".join(result if result and rr.returncode in (0, 1) else lines[-3:])
            return ("passed" if rr.returncode == 0 else "failed", f"run {target} {label}", tail[:800])
        except subprocess.TimeoutExpired:
            return ("failed", f"run {target} {label}", "timed out")

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for res in pool.map(run_one, runs):
            report(*res)
    print(f"modules in {out_dir}")
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
