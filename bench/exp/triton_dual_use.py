# Experiment: is Triton 3.6's pipelined loop wrong when one loaded tile feeds
# both tl.dot and a register reduction (rmsnorm_matmul_16k's fused kernel)?
import torch, triton, triton.language as tl

@triton.jit
def k_dual(x, w, out, TWICE: tl.constexpr, BK: tl.constexpr, SUM: tl.constexpr):
    bx = tl.program_id(0)
    by = tl.program_id(1)
    S0 = tl.full((128,), 0.0, tl.float32)
    S1 = tl.full((128, 128), 0.0, tl.float32)
    for k in range(0, 4096 // BK):
        i = tl.arange(0, 128)[:, None]
        j = tl.arange(0, BK)[None, :]
        X2 = tl.load(x + ((by * 128) + i) * 4096 + ((k * BK) + j))
        if TWICE == 1:
            X3 = tl.load(x + ((by * 128) + i) * 4096 + ((k * BK) + j), cache_modifier=".cg")
        elif TWICE == 2:
            X3 = tl.load(x + ((by * 128) + i) * 4096 + ((k * BK) + j), volatile=True)
        elif TWICE == 3:
            X3 = tl.load(x + ((by * 128) + i) * 4096 + ((k * BK) + j), eviction_policy="evict_last")
        else:
            X3 = X2
        E3 = X3.to(tl.float32) * X3.to(tl.float32)
        if SUM:
            S0 = S0 + tl.sum(E3, axis=1)
        i2 = tl.arange(0, BK)[:, None]
        j2 = tl.arange(0, 128)[None, :]
        B4 = tl.load(w + ((k * BK) + i2) * 4096 + ((bx * 128) + j2))
        S1 = tl.dot(X2, B4, S1)
    i = tl.arange(0, 128)[:, None]
    j = tl.arange(0, 128)[None, :]
    if SUM:
        tl.store(out + ((by * 128) + i) * 4096 + ((bx * 128) + j), (S1 * tl.rsqrt(S0[:, None] * 0.000244140625 + 1e-06)).to(tl.bfloat16))
    else:
        tl.store(out + ((by * 128) + i) * 4096 + ((bx * 128) + j), S1.to(tl.bfloat16))

torch.manual_seed(0)
x = torch.randn(16384, 4096, device="cuda", dtype=torch.bfloat16)
w = (torch.randn(4096, 4096, device="cuda") / 64).to(torch.bfloat16)
xf = x.float()
ref = (xf * torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + 1e-6)) @ w.float()
refs = {1: ref, 0: xf @ w.float()}
for bk in (64, 32):
  for summ in (1,):
    for twice in (1, 2, 3):
        for warps in (4, 8):
            for stages in (3,):
                kw = dict(TWICE=twice, BK=bk, SUM=summ, num_warps=warps, num_stages=stages)
                outs = []
                for rep in range(3):
                    o = torch.full((16384, 4096), float("nan"), device="cuda", dtype=torch.bfloat16)
                    k_dual[(32, 128, 1)](x, w, o, **kw)
                    torch.cuda.synchronize()
                    outs.append(o.float())
                r = refs[summ]
                err = max(((a - r).norm() / r.norm()).item() for a in outs)
                same = all(torch.equal(outs[0], a) for a in outs[1:])
                ms = triton.testing.do_bench(lambda: k_dual[(32, 128, 1)](x, w, o, **kw))
                print(f"{ms:.3f} ms twice={twice} bk={bk} sum={summ} warps={warps} stages={stages}: rel err {err:.2e} deterministic {same}", flush=True)
