# Experiment (session 16, 2026-12-05): hand-made variants of emitted modules,
# timed by bench/exp/s16/drive.py on the GPU machine (README.md: what they
# showed).  usage: python3 bench/exp/s16/gen.py OUT_DIR BASE_DIR, BASE_DIR
# holding bench/prepare.sh's modules of 5361f6a (before src/tile/defer.c):
#   rm_a   rmsnorm_matmul_16k's product kernel with bulk copies (T.copy), its
#          row-layout annotation dropped, the squares still reduced each trip;
#   rm_e   rm_a with the squares accumulated element-wise, reduced once after
#          the K loop (what defer.c now makes);
#   rm_e2  rm_e whose epilogue goes through shared memory and a TMA store;
#          rm_e3 the same with a swizzled shared tile;
#   rm_p   rm_a without the normalization (the product alone: wrong by
#          design, a speed bound); rm_p2, rm_p3 its epilogues as rm_e2/e3;
#   att_v5 attention_4k with FA3's intra-warpgroup overlap: the next trip's
#          Q K^T issued (T.wgmma_gemm) before this trip's softmax, waited by
#          T.wait_wgmma; the loop runs one trip more (K/V indices clamped,
#          its scores masked to -inf) instead of a prologue/epilogue, which
#          TileLang 0.1.15 cannot warp-specialize (a product outside the
#          pipelined loop sees all 384 threads);
#   att_v3now  attention_4k with the row sum reduced before P V (exp once,
#          P its cast);
#   t_ws   attention_4k's Triton-exp2 module with tl.range(warp_specialize=True).
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gen import key_loop, write  # noqa: E402

out, base = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def put(name, text):
    open(os.path.join(out, name + ".py"), "w").write(text)


rm = open(os.path.join(base, "rmsnorm_matmul_16k_tilelang.py")).read()
ann = re.search(r"        T\.annotate_layout\(\{E3.*\n", rm).group(0)
a = rm.replace(ann, "").replace(
    "            for i, j in T.Parallel(128, 64):\n                X2[i, j] = x[((by * 128) + i), ((k * 64) + j)]",
    "            T.copy(x[((by * 128)):((by * 128)) + 128, ((k * 64)):((k * 64)) + 64], X2)").replace(
    "            for i, j in T.Parallel(64, 256):\n                B4[i, j] = t12_mul[((k * 64) + i), ((bx * 256) + j)]",
    "            T.copy(t12_mul[((k * 64)):((k * 64)) + 64, ((bx * 256)):((bx * 256)) + 256], B4)")
assert a.count("T.copy(") == 2
squares = ("            for i, j in T.Parallel(128, 64):\n"
           "                E3[i, j] = (T.Cast(\"float32\", X2[i, j]) * T.Cast(\"float32\", X2[i, j]))\n"
           "            T.reduce_sum(E3, S0, dim=1, clear=False)\n")
e = a.replace(squares, squares.replace("E3[i, j] = (", "E3[i, j] += (").split("            T.reduce_sum")[0]).replace(
    "        for i in T.Parallel(128):\n            S0_s[i] = S0[i]",
    "        T.reduce_sum(E3, S0, dim=1, clear=False)\n        for i in T.Parallel(128):\n            S0_s[i] = S0[i]").replace(
    "        T.fill(S1, T.float32(0))", "        T.fill(S1, T.float32(0))\n        T.fill(E3, T.float32(0))")
p = a.replace(squares, "")
assert e != a and p != a


def staged(src, swizzle):
    old = re.search(r"        for i, j in T\.Parallel\(128, 256\):\n            out\[.*\n", src).group(0)
    rhs = old.split("\n")[1].split(" = ", 1)[1]
    new = ("        for i, j in T.Parallel(128, 256):\n            Cs[i, j] = " + rhs + "\n"
           "        T.copy(Cs, out[((by * 128)):((by * 128)) + 128, ((bx * 256)):((bx * 256)) + 256])\n")
    src = src.replace(old, new).replace('        S0_s = T.alloc_shared((128,), "float32")\n',
                                        '        S0_s = T.alloc_shared((128,), "float32")\n'
                                        '        Cs = T.alloc_shared((128, 256), "bfloat16")\n')
    if swizzle:
        src = src.replace("        T.fill(S0, T.float32(0))",
                          "        T.annotate_layout({Cs: tilelang.layout.make_swizzled_layout(Cs)})\n"
                          "        T.fill(S0, T.float32(0))", 1)
    return src


for name, text in (("rm_base", rm), ("rm_a", a), ("rm_e", e), ("rm_e2", staged(e, False)), ("rm_e3", staged(e, True)),
                   ("rm_p", p), ("rm_p2", staged(p, False)), ("rm_p3", staged(p, True))):
    put(name, text)

att_path = os.path.join(base, "attention_4k_tilelang.py")
src, s, t, st = key_loop(att_path)
fill, copyK, g1, prev, mx, rho, S2, A8, copyV, g2, S3, E10, sm = st
A8c = [A8[0], A8[1].split("=")[0] + '= T.Cast("bfloat16", E10[i, j])']
write(src, s, t, [fill, copyK, g1, prev, mx, rho, S2, E10, S3, sm, A8c, copyV, g2], os.path.join(out, "att_v3now.py"))

att = open(att_path).read()
lo = att.index('        T.fill(S0, -T.infinity("float32"))')
hi = att.index("        for i in T.Parallel(128):\n            S3_s[i] = S3[i]")
C = "T.float32(0.12751743082459868)"
M = 'T.if_then_else((S0[i] == -T.infinity("float32")), T.float32(0), S0[i])'
Q = "(bz // 16), (bz % 16)"
body = f'''        T.fill(S0, -T.infinity("float32"))
        T.fill(S2, T.float32(0))
        T.fill(S3, T.float32(0))
        T.fill(A8, T.float32(0))
        T.copy(q[{Q}, ((by * 128)):((by * 128)) + 128, 0:128], A5)
        for k in T.Pipelined(33, num_stages=2):
            T.copy(k_1[{Q}, ((T.min(k, 31) * 128)):((T.min(k, 31) * 128)) + 128, 0:128], B6)
            T.wgmma_gemm(A5, B6, C4, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
            T.copy(v[{Q}, ((T.max(k - 1, 0) * 128)):((T.max(k - 1, 0) * 128)) + 128, ((bx * 128)):((bx * 128)) + 128], B9)
            T.wgmma_gemm(A8, B9, S2, policy=T.GemmWarpPolicy.FullRow)
            T.wait_wgmma(1)
            for i, j in T.Parallel(128, 128):
                C4[i, j] = T.if_then_else(k < 32, C4[i, j], -T.infinity("float32"))
            for i in T.Parallel(128):
                prev1[i] = S0[i]
            T.reduce_max(C4, S0, dim=1, clear=False)
            for i in T.Parallel(128):
                rho7[i] = T.exp2((prev1[i] - {M}) * {C})
            for i, j in T.Parallel(128, 128):
                C4[i, j] = T.exp2(C4[i, j] * {C} - {M} * {C})
            for i in T.Parallel(128):
                S3[i] = (S3[i] * rho7[i])
            T.reduce_sum(C4, S3, dim=1, clear=False)
            T.wait_wgmma(0)
            for i, j in T.Parallel(128, 128):
                S2[i, j] = (S2[i, j] * rho7[i])
            T.copy(C4, A8)
'''
put("att_v5", (att[:lo] + body + att[hi:]).replace('        E10 = T.alloc_fragment((128, 128), "float32")\n', ""))

tr = open(os.path.join(base, "attention_4k_triton-exp2.py")).read()
put("t_ws", tr.replace("    for k in range(0, 32):", "    for k in tl.range(0, 32, warp_specialize=True):", 1))
