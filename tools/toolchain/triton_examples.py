"""Small Triton kernels used to check the toolchain (tools/toolchain/validate_example.py).

@triton.jit also reads the source: a kernel exec()'d from a string fails with
"ValueError: @jit functions should be defined in a Python file".
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # M, N, K must be multiples of BM, BN, BK (no masks: this is a compile check).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


# Offline compilation sees only what it is told.  A launch through the JIT
# specialises arguments: pointers (and ints) divisible by 16 get the attribute
# tt.divisibility=16, ints equal to 1 become constexprs.  Without the same hints
# ASTSource compiles a different kernel (here: no cp.async, no pipelining,
# 32 KiB shared instead of 96 KiB), so each entry states them.
DIV16 = [["tt.divisibility", 16]]

# name -> dict(fn, signature, constexprs, attrs (by argument name), options)
KERNELS = {
    "add": dict(
        fn=add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024},
        attrs={"x_ptr": DIV16, "y_ptr": DIV16, "out_ptr": DIV16},
        options={},
    ),
    "matmul": dict(
        fn=matmul_kernel,
        signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                   "sam": "i32", "sak": "constexpr", "sbk": "i32", "sbn": "constexpr", "scm": "i32",
                   "scn": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
        constexprs={"sak": 1, "sbn": 1, "scn": 1, "BM": 128, "BN": 128, "BK": 64},
        attrs={n: DIV16 for n in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "sam", "sbk", "scm")},
        options={"num_warps": 8, "num_stages": 3},
    ),
}


def ast_source(name):
    """triton.compiler.ASTSource for KERNELS[name] (attrs keyed by argument index)."""
    k = KERNELS[name]
    names = list(k["signature"])
    attrs = {(names.index(a),): v for a, v in k["attrs"].items()}
    return triton.compiler.ASTSource(fn=k["fn"], signature=k["signature"], constexprs=k["constexprs"], attrs=attrs)
