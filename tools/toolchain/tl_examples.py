"""Small TileLang kernels used to check the toolchain (tools/toolchain/validate_example.py).

TileLang re-reads a kernel's Python source (inspect.getsource), so kernels must
live in a real .py file that is imported, as here; exec() of a string fails with
"OSError: could not get source code".
"""
import tilelang.language as T


def make_gemm(M=1024, N=1024, K=1024, bM=128, bN=128, bK=64, stages=3, threads=128,
              dtype="float16", accum="float32"):
    """C = A @ B; shared tiles, a f32 fragment accumulator, a pipelined K loop."""

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared((bK, bN), dtype)
            C_f = T.alloc_fragment((bM, bN), accum)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A[by * bM, k * bK], A_s)
                T.copy(B[k * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * bM, bx * bN])

    return gemm


def make_elementwise(M=1024, N=1024, bM=32, bN=128, threads=128, dtype="float32"):
    """Y[i, j] = X[i, j] * S[j] + X[i, (j + 1) % N]: global buffers read at computed indices."""

    @T.prim_func
    def ew(X: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            for i, j in T.Parallel(bM, bN):
                r = by * bM + i
                c = bx * bN + j
                Y[r, c] = X[r, c] * S[c] + X[r, (c + 1) % N]

    return ew


def make_rowreduce(M=1024, N=1024, bM=4, threads=128, dtype="float32"):
    """OMax[i] = max_j X[i, j]; OSum[i] = sum_j exp(X[i, j] - OMax[i])."""

    @T.prim_func
    def rowred(X: T.Tensor((M, N), dtype), OMax: T.Tensor((M,), dtype), OSum: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, bM), threads=threads) as bx:
            x_f = T.alloc_fragment((bM, N), dtype)
            m_f = T.alloc_fragment((bM,), dtype)
            s_f = T.alloc_fragment((bM,), dtype)
            T.copy(X[bx * bM, 0], x_f)
            T.reduce_max(x_f, m_f, dim=1, clear=True)
            for i, j in T.Parallel(bM, N):
                x_f[i, j] = T.exp(x_f[i, j] - m_f[i])
            T.reduce_sum(x_f, s_f, dim=1)
            T.copy(m_f, OMax[bx * bM])
            T.copy(s_f, OSum[bx * bM])

    return rowred


# name -> (factory, out_idx for tilelang.compile)
KERNELS = {
    "gemm": (make_gemm, [2]),
    "elementwise": (make_elementwise, [2]),
    "rowreduce": (make_rowreduce, [1, 2]),
}
