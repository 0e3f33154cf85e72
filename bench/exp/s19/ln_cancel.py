# Layer norm -> linear with the mean correction in the epilogue, rstd (x W - mean colsum W),
# against the exact rstd (x - mean) W: x in bfloat16, W stored in bfloat16, x W accumulated in
# float32 one 16-wide k step at a time (as tensor cores do), K = 4096.  Prints the relative error
# per kind of row (python3 bench/exp/s19/ln_cancel.py; NumPy only).
import numpy as np
rng = np.random.default_rng(0)
K, N = 4096, 64
def bf16(a):
    a = np.asarray(a, np.float32); u = a.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)
W = bf16(rng.standard_normal((K, N)) / np.sqrt(K))
cs = W.astype(np.float32).sum(0, dtype=np.float32)  # colsum of the stored W'
def f32_chunks(x):  # x W' in float32, one rounding per 16-wide k step
    acc = np.zeros(N, np.float32)
    for k in range(0, K, 16):
        acc = (acc + (x[k:k+16].astype(np.float64) @ W[k:k+16].astype(np.float64)).astype(np.float32)).astype(np.float32)
    return acc
def case(name, x):
    x = bf16(x).astype(np.float64)
    mu, var = x.mean(), x.var()
    rstd = 1 / np.sqrt(var + 1e-5)
    exact = rstd * ((x - mu) @ W.astype(np.float64))
    epi = rstd * (f32_chunks(x).astype(np.float64) - mu * cs.astype(np.float64))
    err = np.linalg.norm(epi - exact) / max(np.linalg.norm(exact), 1e-30)
    print(f"{name:40s} |mean|/std {abs(mu)/np.sqrt(var+1e-30):10.1f}  rel err {err:.2e}")
case("N(0,1)", rng.standard_normal(K))
case("10 + N(0,1)", 10 + rng.standard_normal(K))
case("100 + N(0,1)", 100 + rng.standard_normal(K))
case("1000 + N(0,4)", 1000 + 4 * rng.standard_normal(K))
t = np.full(K, 1000.0); t[0] = 1004; case("ties 1000, one 1004", t)
t = np.full(K, 1000.0); t[:64] = 1004; case("ties 1000, 64 of 1004", t)
case("constant 3", np.full(K, 3.0))

# The same with x shifted by its row's first element c before the product:
# (x - c) rounded to bfloat16 (the product's operand type), the correction by
# mean(x - c).
def shifted(name, x):
    x = bf16(x).astype(np.float64)
    mu, var = x.mean(), x.var()
    rstd = 1 / np.sqrt(var + 1e-5)
    exact = rstd * ((x - mu) @ W.astype(np.float64))
    xs = bf16((x - x[0]).astype(np.float32)).astype(np.float64)
    got = rstd * (f32_chunks(xs).astype(np.float64) - (x - x[0]).mean() * cs.astype(np.float64))
    err = np.linalg.norm(got - exact) / max(np.linalg.norm(exact), 1e-30)
    print(f"shifted: {name:31s} |mean|/std {abs(mu)/np.sqrt(var+1e-30):10.1f}  rel err {err:.2e}")
shifted("N(0,1)", rng.standard_normal(K))
t = rng.standard_normal(K); t[0] = 100; shifted("N(0,1), first element 100", t)
t = np.full(K, 1000.0); t[0] = 1004; shifted("ties 1000, one 1004 (first)", t)
