/*
 * triton.c: the Triton emitter (CUDA capability 9.0).
 *
 * Each kernel becomes a @triton.jit function taking one pointer per global
 * tensor it touches (tensors are contiguous and row-major, so a load's flat
 * offset is computed from its indices and the constant shape).  The grid
 * ids are tl.program_id(0..2).  Every map and store statement works on a
 * 2-D block: i = tl.arange(0, R)[:, None], j = tl.arange(0, C)[None, :]
 * (power-of-two extents, checked), a mask `_mask`, and `_zero`, a block of
 * zeros added to every pointer so that each load has the statement's full
 * block shape.  Each of those names carries the block's shape (i_64,
 * j_128, _zero_64_128, _mask_64_128): Triton requires a variable assigned in
 * a loop or a branch to keep one type, and the statements of a fused kernel
 * work on blocks of several shapes.  Triton's tl.where evaluates both branches and loads run
 * whatever the select, so every load carries the statement's mask (the
 * lowering clamps data-dependent indices, so masked-in loads are in
 * bounds).  Tile buffers live in registers: a map assigns a block, a gemm
 * is tl.dot accumulating into the float32 block (IEEE precision for f32
 * storage, so that TF32 does not lose the f32 tolerance), a reduce is
 * tl.sum/max/min along axis 1 combined with the accumulator.  A tile read
 * must be at the statement's own coordinates (what the lowering produces).
 * Offsets are int32, except into a global of 2^31 elements or more, whose
 * indices are widened to int64 first.  Where the schedule asks (copy=1),
 * plain tile loads and unmasked stores go through tensor descriptors (TMA)
 * instead of pointers (see "tile loads through tensor descriptors").
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"

static const char *tr_template(Op op, ElemKind ek) {
  (void)ek;
  switch (op) {
  case OP_NEG: return "(-%0)";
  case OP_EXP: return "tl.exp($0)";
  case OP_LOG: return "tl.log($0)";
  case OP_SQRT: return "tl.sqrt($0)";
  case OP_RSQRT: return "tl.rsqrt($0)";
  case OP_TANH: return "libdevice.tanh($0)";
  case OP_ERF: return "libdevice.erf($0)";
  case OP_SIGMOID: return "tl.sigmoid($0)";
  case OP_RELU: return "tl.maximum($0, 0.0, propagate_nan=tl.PropagateNan.ALL)";
  case OP_ABS: return "tl.abs($0)";
  case OP_CAST: return "$0.to(tl.float32)";
  case OP_ADD: return "(%0 + %1)";
  case OP_SUB: return "(%0 - %1)";
  case OP_MUL: return "(%0 * %1)";
  case OP_DIV: return "(%0 / %1)";
  case OP_IDIV: /* Lean's (Euclidean, x / 0 = 0) from Triton's truncating // and % */
    return "tl.where($1 == 0, 0, $0 // tl.where($1 == 0, 1, $1) + "
           "tl.where($0 % tl.where($1 == 0, 1, $1) < 0, tl.where($1 > 0, -1, 1), 0))";
  case OP_POW: return "libdevice.pow($0, $1)";
  case OP_MAX: return "tl.maximum($0, $1, propagate_nan=tl.PropagateNan.ALL)";
  case OP_MIN: return "tl.minimum($0, $1, propagate_nan=tl.PropagateNan.ALL)";
  case OP_LT: return "(%0 < %1)";
  case OP_LE: return "(%0 <= %1)";
  case OP_GT: return "(%0 > %1)";
  case OP_GE: return "(%0 >= %1)";
  case OP_EQ: return "(%0 == %1)";
  case OP_NE: return "(%0 != %1)";
  case OP_SELECT: return "tl.where(?0, %1, %2)";
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN:
  case OP_MATMUL:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER:
  case OP_COUNT: return NULL;
  }
  return NULL;
}

/* Constants: Python numbers (INF is a module-level constexpr, NaN INF - INF);
   as_value: a 0-d tensor, for the math functions that take tensors only. */
static const char *tr_real(Emit *e, double v) {
  char buf[48];
  if (v != v) return "(INF - INF)"; /* no NaN global: Triton compares globals by value, and NaN != NaN */
  if (v > 1e308) return "INF";
  if (v < -1e308) return "-INF";
  fmt_double(buf, sizeof buf, v);
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return arena_strdup(e->a, buf);
}

static void tr_constant(Emit *e, const SExpr *x, bool as_value) {
  const char *s = x->kind == SX_INT ? arena_printf(e->a, "%lld", (long long)x->i) : tr_real(e, x->f);
  if (as_value) emit_printf(e, "tl.full([], %s, %s)", s, x->kind == SX_INT ? "tl.int32" : "tl.float32");
  else emit_printf(e, "%s", s);
}

static const char *tl_dtype(DType t) {
  switch (t) {
  case DT_F32: return "tl.float32";
  case DT_F16: return "tl.float16";
  case DT_BF16: return "tl.bfloat16";
  case DT_I32: return "tl.int32";
  case DT_I64: return "tl.int64";
  case DT_BOOL: return "tl.int1";
  }
  return "?";
}

/* The signature type Triton gives a pointer to t. */
static const char *ptr_sig(DType t) {
  switch (t) {
  case DT_F32: return "*fp32";
  case DT_F16: return "*fp16";
  case DT_BF16: return "*bf16";
  case DT_I32: return "*i32";
  case DT_I64: return "*i64";
  case DT_BOOL: return "*i1";
  }
  return "?";
}

/* G + flat offset of the indices + _zero (in int64 for a global of 2^31
   elements or more) */
static void tr_pointer(Emit *e, const TBuf *g, SExpr **idx, int n) {
  bool big = shape_numel(&g->shape) >= ((int64_t)1 << 31);
  emit_printf(e, "%s + ", e->gname[g->id]);
  int64_t stride = 1;
  int64_t strides[TS_MAX_RANK];
  for (int d = n - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= g->shape.d[d].n;
  }
  bool any = false;
  for (int d = 0; d < n; d++) {
    if (idx[d]->kind == SX_INT && idx[d]->i == 0) continue;
    if (any) emit_printf(e, " + ");
    emit_expr(e, idx[d]);
    if (big && idx[d]->kind != SX_INT) emit_printf(e, ".to(tl.int64)");
    if (strides[d] != 1) emit_printf(e, " * %lld", (long long)strides[d]);
    any = true;
  }
  emit_printf(e, "%s_zero_%lld_%lld", any ? " + " : "", (long long)e->blk[0], (long long)e->blk[1]);
}

static void tr_load(Emit *e, const SExpr *x) {
  emit_printf(e, "tl.load(");
  tr_pointer(e, x->buf, x->idx, x->nidx);
  emit_printf(e, ", mask=_mask_%lld_%lld, other=0%s)", (long long)e->blk[0], (long long)e->blk[1],
              e->evict_last ? ", eviction_policy=\"evict_last\"" : "");
  if (emit_is_real(x->buf->dtype) && x->buf->dtype != DT_F32) emit_printf(e, ".to(tl.float32)");
}

/* ---- tile loads through tensor descriptors (TMA) ----
   A map that only loads a rectangle of a global into a shared tile
   (tile_map_is_copy: no mask, so no overhang, and no conversion) whose
   block's i and j run along the global's last two dimensions is a
   descriptor load: the kernel makes one tl.make_tensor_descriptor per
   global and block (_tma0, _tma1, ...) over the global seen as a matrix
   (its leading dimensions flattened into rows; an unmasked block never
   crosses from one leading index into the next), and Triton's pipeliner
   turns such loads in a loop into TMA copies with barriers.  TMA needs
   16-byte row strides and a box of at most 256 a side with at least 16
   bytes in a row; any other map stays tl.load.  An unmasked 2-D store of
   such a block is a descriptor store (a TMA store) likewise.  The schedule's copy=1
   asks for it, copy=0 keeps pointer loads; the default is pointer loads
   until the GPU has timed both (TS_TR_TMA=1 makes descriptors the
   default).  A device-side descriptor lives in global scratch memory
   that the launch allocates: run() sets an allocator (torch.empty). */
static bool tma_kernel(const Kernel *k) {
  if (k->copy) return k->copy == 1;
  const char *on = getenv("TS_TR_TMA");
  return on && !strcmp(on, "1");
}

/* the flattened matrix of global g: rows x cols */
static void tma_matrix(const TBuf *g, int64_t *rows, int64_t *cols) {
  int n = g->shape.rank;
  *cols = g->shape.d[n - 1].n;
  *rows = 1;
  for (int d = 0; d < n - 1; d++) *rows *= g->shape.d[d].n;
}

/* Do indices idx[0..n) of global g address a block [r, c] that a
   descriptor can move? */
static bool tma_rect(const TBuf *g, SExpr *const *idx, int n, int64_t r, int64_t c) {
  int di, dj;
  const SExpr *oi, *oj;
  if (!emit_rect(idx, n, &di, &dj, &oi, &oj) || dj != n - 1 || di != n - 2) return false;
  int64_t rows, cols, el = dtype_bytes(g->dtype);
  tma_matrix(g, &rows, &cols);
  return emit_is_real(g->dtype) && r <= 256 && c <= 256 && c * el >= 16 && (cols * el) % 16 == 0 &&
         rows < ((int64_t)1 << 31);
}

/* The global and block of a statement a descriptor can do: a copy map
   (a load), or an unmasked 2-D store (a TMA store); else NULL. */
static const TBuf *tma_stmt(const Stmt *s, int64_t blk[2]) {
  if (s->kind == ST_MAP && tile_map_is_copy(s) && s->dst->shape.rank == 2) {
    blk[0] = s->dst->shape.d[0].n, blk[1] = s->dst->shape.d[1].n;
    return tma_rect(s->value->buf, s->value->idx, s->value->nidx, blk[0], blk[1]) ? s->value->buf : NULL;
  }
  if (s->kind == ST_STORE && !stmt_masked(s) && s->ngidx >= 2) {
    blk[0] = s->ext[0], blk[1] = s->ext[1];
    return tma_rect(s->global, s->gidx, s->ngidx, blk[0], blk[1]) ? s->global : NULL;
  }
  return NULL;
}

/* the kernel's descriptor of global g and block blk, or -1 */
static int tma_find(const Emit *e, const TBuf *g, const int64_t blk[2]) {
  for (int t = 0; t < e->ntma; t++)
    if (e->tma[t] == g && e->tma_blk[t][0] == blk[0] && e->tma_blk[t][1] == blk[1]) return t;
  return -1;
}

/* the descriptor of statement s in this kernel, or -1 */
static int tma_of(const Emit *e, const Stmt *s) {
  int64_t blk[2];
  const TBuf *g = tma_kernel(e->k) ? tma_stmt(s, blk) : NULL;
  return g ? tma_find(e, g, blk) : -1;
}

static bool tma_note(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Emit *e = ud;
  int64_t blk[2];
  const TBuf *g = tma_stmt(s, blk);
  if (!g || tma_find(e, g, blk) >= 0) return true;
  if (e->ntma < 16) {
    e->tma[e->ntma] = g;
    e->tma_blk[e->ntma][0] = blk[0], e->tma_blk[e->ntma][1] = blk[1];
    e->ntma++;
  }
  return true;
}

/* Collect kernel k's descriptors into e (none unless the schedule asks). */
static void tma_scan(Emit *e, const Kernel *k) {
  e->ntma = 0;
  if (tma_kernel(k)) tile_walk(&k->body, tma_note, e);
}

/* the offsets [row, col] of a descriptor's block at indices idx[0..n)
   of global g: the leading indices flattened, times the rows of a matrix,
   plus the block's row offset; the column offset */
static void tma_offsets(Emit *e, const TBuf *g, SExpr *const *idx, int n) {
  const SExpr *oi, *oj;
  int di, dj;
  emit_rect(idx, n, &di, &dj, &oi, &oj);
  emit_printf(e, "[");
  bool any = false;
  int64_t stride = g->shape.d[n - 2].n;
  for (int d = n - 3; d >= 0; d--) {
    if (!(idx[d]->kind == SX_INT && idx[d]->i == 0)) {
      emit_printf(e, "%s(", any ? " + " : "");
      emit_expr(e, idx[d]);
      emit_printf(e, ") * %lld", (long long)stride);
      any = true;
    }
    stride *= g->shape.d[d].n;
  }
  if (oi) {
    emit_printf(e, "%s", any ? " + " : "");
    emit_expr(e, oi);
  } else if (!any) {
    emit_printf(e, "0");
  }
  emit_printf(e, ", ");
  if (oj) emit_expr(e, oj);
  else emit_printf(e, "0");
  emit_printf(e, "]");
}

/* A tile read as a block of the statement's shape: at the statement's own
   coordinates, or broadcast along an axis of extent 1 (a row statistic
   read across columns, a per-block scalar). */
static bool at_var(const SExpr *x, TVar v) { return x->kind == SX_VAR && x->var == v; }
static bool at_zero(const SExpr *x) { return x->kind == SX_INT && x->i == 0; }

/* A loaded tile that a loop gives tl.dot and also reads otherwise is
   loaded a second time for the other reads (name_r): Triton 3.6 pipelines
   such a loop wrongly, and not deterministically, when one load feeds
   both (rmsnorm_matmul_16k's sum of squares beside its product: 3.5e-2
   off on the H200 at 3 stages, right at 1 stage or with the second load;
   bench/exp/triton_dual_use.py, 2026-12-03). */
static bool is_dual(const Emit *e, const TBuf *b) {
  for (int i = 0; i < e->ndual; i++)
    if (e->dual[i] == b) return true;
  return false;
}
static const char *read_name(Emit *e, const TBuf *b) {
  return is_dual(e, b) && !e->reading_first ? arena_printf(e->a, "%s_r", b->name) : b->name;
}

typedef struct DualScan { const TBuf *cand[16]; int ncand; bool read[16]; const Stmt *fwd[16]; int nfwd; } DualScan;
static void dual_note_read(DualScan *d, const TBuf *b) {
  for (int i = 0; i < d->ncand; i++)
    if (d->cand[i] == b) d->read[i] = true;
}
static void dual_note_tile(const SExpr *x, void *ud) {
  if (x->kind == SX_TILE) dual_note_read(ud, x->buf);
}
static void dual_note_exprs(const SExpr *x, void *ud) { sexpr_walk(x, dual_note_tile, ud); }
static bool dual_cands(const Stmt *s, int depth, void *ud) {
  (void)depth;
  DualScan *d = ud;
  if (s->kind == ST_GEMM)
    for (int o = 0; o < 2; o++) {
      const TBuf *b = o ? s->b : s->a;
      bool seen = false;
      for (int i = 0; i < d->ncand; i++) seen |= d->cand[i] == b;
      if (!seen && d->ncand < 16) d->cand[d->ncand++] = b;
    }
  return true;
}
static bool is_fwd(const Stmt *const *fwd, int n, const Stmt *s) {
  for (int i = 0; i < n; i++)
    if (fwd[i] == s) return true;
  return false;
}
static bool dual_reads(const Stmt *s, int depth, void *ud) {
  (void)depth;
  DualScan *d = ud;
  if (is_fwd(d->fwd, d->nfwd, s)) return true;
  stmt_exprs(s, dual_note_exprs, d);
  if (s->kind == ST_REDUCE) dual_note_read(d, s->a);
  return true;
}
/* the tiles of loop body l to load twice: loaded by a copy in l, given to
   tl.dot in l and read by another statement of l (descriptor loads too:
   one shared by both uses was wrong on the H200 as well, session 18).  A
   tile handed to tl.dot through a copy of l (map A[i, j] = X[i, j], the
   operand in the storage type) feeds it as well: the copy reads the first
   load and is not one of the other reads (a lane-wise Welford pair beside
   a product, wrong and not deterministic at 8 warps and 2 or 3 stages on
   an H100, session 20: bench/exp/s20/repeat.py) */
static void find_duals(Emit *e, const StmtList *l) {
  DualScan d = {.ncand = 0};
  tile_walk(l, dual_cands, &d);
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    const SExpr *v = s->kind == ST_MAP ? s->value : NULL;
    if (!v || v->kind != SX_TILE || s->mask || v->nidx != s->dst->shape.rank || d.nfwd >= 16 || d.ncand >= 16) continue;
    bool own = true; /* read at the copy's own coordinates */
    for (int k = 0; k < v->nidx; k++) own &= at_var(v->idx[k], k == v->nidx - 1 ? TV_J : TV_I);
    bool to_dot = false;
    for (int c = 0; c < d.ncand; c++) to_dot |= d.cand[c] == s->dst;
    if (!own || !to_dot || v->buf->shape.rank != s->dst->shape.rank) continue;
    d.fwd[d.nfwd++] = s;
    d.cand[d.ncand++] = v->buf;
  }
  tile_walk(l, dual_reads, &d);
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->kind != ST_MAP || !s->value || s->value->kind != SX_LOAD) continue;
    for (int c = 0; c < d.ncand; c++)
      if (d.cand[c] == s->dst && d.read[c] && e->ndual < 16 && !is_dual(e, s->dst)) e->dual[e->ndual++] = s->dst;
  }
  for (int i = 0; i < d.nfwd && e->nfwd < 16; i++) e->dual_fwd[e->nfwd++] = d.fwd[i];
}

static void tr_tile(Emit *e, const SExpr *x) {
  const TBuf *b = x->buf;
  const char *bn = read_name(e, b);
  bool ok = true;
  if (x->nidx == 1) {
    if (at_var(x->idx[0], TV_I)) emit_printf(e, "%s[:, None]", bn);
    else if (at_var(x->idx[0], TV_J)) emit_printf(e, "%s[None, :]", bn);
    /* (not tl.reshape to (1, 1): Triton 3.6's LLVM spent minutes in its SLP
       vectorizer on a 1x8192 row that read four such scalars, and builds it
       in a second with the expand_dims) */
    else if (at_zero(x->idx[0]) && b->shape.d[0].n == 1) emit_printf(e, "%s[:, None]", bn);
    else ok = false;
  } else {
    bool r = at_var(x->idx[0], TV_I) || (at_zero(x->idx[0]) && b->shape.d[0].n == 1);
    bool c = at_var(x->idx[1], TV_J) || (at_zero(x->idx[1]) && b->shape.d[1].n == 1);
    if (r && c) emit_printf(e, "%s", bn);
    /* a [1, n] row read down a column block, or an [n, 1] column across a row */
    /* a tile read transposed (a reduction down its columns) */
    else if (at_var(x->idx[0], TV_J) && at_var(x->idx[1], TV_I))
      emit_printf(e, "tl.trans(%s)", bn);
    else if (at_zero(x->idx[0]) && b->shape.d[0].n == 1 && at_var(x->idx[1], TV_I))
      emit_printf(e, "tl.reshape(%s, (%lld, 1))", bn, (long long)b->shape.d[1].n);
    else if (at_zero(x->idx[1]) && b->shape.d[1].n == 1 && at_var(x->idx[0], TV_J))
      emit_printf(e, "tl.reshape(%s, (1, %lld))", bn, (long long)b->shape.d[0].n);
    else ok = false;
  }
  if (!ok) {
    emit_fail(e, "the tile %s is read away from the statement's own coordinates", bn);
    return;
  }
  if (emit_is_real(b->dtype) && b->dtype != DT_F32) emit_printf(e, ".to(tl.float32)");
}

/* i and j carry the block's shape */
static void tr_var(Emit *e, TVar v) {
  if (v == TV_I) emit_printf(e, "i_%lld", (long long)e->blk[0]);
  else if (v == TV_J) emit_printf(e, "j_%lld", (long long)e->blk[1]);
  else emit_printf(e, "%s", tvar_name(v));
}

/* exp(a - b) as one FMA and an exp2, as the TileLang emitter writes it:
   the default since three harness runs timed both forms (an H200 in
   session 11, an H100 in sessions 15 and 16: masked attention 6-7% faster,
   dense 2-10% in 11 of 12 readings, linear cross-entropy 0.7-1.3% slower;
   docs/BENCHMARKS.md, session 17).
   TS_TR_EXP2=0 keeps tl.exp (bench/prepare.sh's triton-exp variant). */
static EmitTarget triton_exp2;

static void tr_imports(Emit *e) {
  const char *on = getenv("TS_TR_EXP2");
  if (!on || strcmp(on, "0")) {
    triton_exp2 = emit_triton;
    triton_exp2.exp_diff = "tl.exp2(%0 * %2 - %1 * %2)";
    triton_exp2.exp_scaled = "tl.exp2(%0 * %1)";
    e->t = &triton_exp2;
  }
  emit_printf(e, "import triton\nimport triton.language as tl\nfrom triton.language.extra import libdevice\n\n"
                 "INF = tl.constexpr(float(\"inf\"))\n");
}

static bool pow2(int64_t v) { return v >= 1 && (v & (v - 1)) == 0; }

/* The block header of a statement over [r, c]: i, j, _zero, _mask. */
static void block(Emit *e, const char *ind, const Stmt *s, int64_t r, int64_t c) {
  if (!pow2(r) || !pow2(c))
    emit_fail(e, "the block [%lld, %lld] of kernel %s is not a power of two", (long long)r, (long long)c,
              e->k->name);
  e->blk[0] = r, e->blk[1] = c;
  emit_printf(e, "%si_%lld = tl.arange(0, %lld)[:, None]\n", ind, (long long)r, (long long)r);
  emit_printf(e, "%sj_%lld = tl.arange(0, %lld)[None, :]\n", ind, (long long)c, (long long)c);
  emit_printf(e, "%s_zero_%lld_%lld = tl.zeros((%lld, %lld), tl.int32)\n", ind, (long long)r, (long long)c, (long long)r,
              (long long)c);
  emit_printf(e, "%s_mask_%lld_%lld = ", ind, (long long)r, (long long)c); /* the mask, as a block */
  if (stmt_masked(s)) {
    emit_printf(e, "(");
    emit_cond(e, s->mask);
    emit_printf(e, ") & ");
  }
  emit_printf(e, "(_zero_%lld_%lld == 0)\n", (long long)r, (long long)c);
}

/* The accumulator's update, @D the accumulator, @A the tile.  tl.max and
   tl.min drop NaNs: adding the row's sum of its NaNs (0 or NaN) makes a
   row holding one reduce to NaN, as the graph's amax and amin do. */
static const char *reduce_combine(Op op, bool nan_ok) {
  if (nan_ok && op == OP_AMAX) return "tl.maximum(@D, tl.max(@A, axis=1))"; /* (Stmt.nan_ok) */
  if (nan_ok && op == OP_AMIN) return "tl.minimum(@D, tl.min(@A, axis=1))";
  return op == OP_SUM    ? "@D + tl.sum(@A, axis=1)"
         : op == OP_AMAX ? "tl.maximum(@D, tl.max(@A, axis=1) + tl.sum(tl.where(@A != @A, @A, 0.0), axis=1), "
                           "propagate_nan=tl.PropagateNan.ALL)"
         : op == OP_AMIN ? "tl.minimum(@D, tl.min(@A, axis=1) + tl.sum(tl.where(@A != @A, @A, 0.0), axis=1), "
                           "propagate_nan=tl.PropagateNan.ALL)"
                         : NULL;
}

/* Does e hold a tensor (a load, a tile, a coordinate, a block or loop
   index)?  Only such a value can be broadcast with tl.broadcast_to; a
   constant is a Python number there. */
static void note_tensor(const SExpr *x, void *ud) {
  if (x->kind == SX_LOAD || x->kind == SX_TILE || x->kind == SX_VAR) *(bool *)ud = true;
}
static bool has_tensor(const SExpr *x) {
  bool any = false;
  sexpr_walk(x, note_tensor, &any);
  return any;
}

/* value as a block of shape [r, c] and type dt.  A load of a tensor of
   type dt is the block as it is; a tensor value is broadcast (adding a
   zero block instead would cost an add per element that the compiler may
   not remove: -0.0 + 0.0 is +0.0); a constant is added to a zero block. */
static void tr_block_value(Emit *e, const SExpr *v, const SExpr *mask, const SExpr *other, DType dt, int64_t r,
                           int64_t c) {
  const char *zt = emit_is_real(dt) ? "tl.float32" : dt == DT_BOOL ? "tl.int1" : tl_dtype(dt);
  if (!mask && v->kind == SX_LOAD && v->buf->dtype == dt) {
    emit_printf(e, "tl.load(");
    tr_pointer(e, v->buf, v->idx, v->nidx);
    emit_printf(e, ", mask=_mask_%lld_%lld, other=0%s)", (long long)e->blk[0], (long long)e->blk[1],
                e->evict_last ? ", eviction_policy=\"evict_last\"" : "");
    return;
  }
  if ((!mask || !other) && has_tensor(v)) {
    emit_printf(e, "tl.broadcast_to(");
    emit_expr(e, v);
    emit_printf(e, ", (%lld, %lld))", (long long)r, (long long)c);
    if (emit_is_real(dt) && v->ek != EK_REAL) emit_printf(e, ".to(tl.float32)");
    if (emit_is_real(dt) && dt != DT_F32) emit_printf(e, ".to(%s)", tl_dtype(dt));
    else if (!emit_is_real(dt) && dt != DT_BOOL) emit_printf(e, ".to(%s)", tl_dtype(dt));
    return;
  }
  if (mask && other) {
    /* the block's mask is [r, c]: the where is the block, no zeros added
       (an add an element that -0.0 keeps the compiler from removing) */
    emit_printf(e, "tl.where(_mask_%lld_%lld, ", (long long)e->blk[0], (long long)e->blk[1]);
    emit_expr(e, v);
    emit_printf(e, ", ");
    emit_expr(e, other);
    emit_printf(e, ")");
    if (dt == DT_BOOL) emit_printf(e, ".to(tl.int1)");
    else if (!emit_is_real(dt) || v->ek != EK_REAL || other->ek != EK_REAL) emit_printf(e, ".to(%s)", zt);
    if (emit_is_real(dt) && dt != DT_F32) emit_printf(e, ".to(%s)", tl_dtype(dt));
    return;
  }
  emit_printf(e, "(");
  emit_expr(e, v);
  if (dt == DT_BOOL) emit_printf(e, " | tl.zeros((%lld, %lld), tl.int1))", (long long)r, (long long)c);
  else emit_printf(e, " + tl.zeros((%lld, %lld), %s))", (long long)r, (long long)c, zt);
  if (emit_is_real(dt) && dt != DT_F32) emit_printf(e, ".to(%s)", tl_dtype(dt));
}

static void tr_list(Emit *e, const StmtList *l, const char *ind);

static void tr_stmt(Emit *e, const Stmt *s, const char *ind) {
  e->reading_first = is_fwd(e->dual_fwd, e->nfwd, s);
  switch (s->kind) {
  case ST_FILL: {
    const TBuf *d = s->dst;
    emit_printf(e, "%s%s = tl.full(", ind, d->name);
    if (d->shape.rank == 1) emit_printf(e, "(%lld,), ", (long long)d->shape.d[0].n);
    else emit_printf(e, "(%lld, %lld), ", (long long)d->shape.d[0].n, (long long)d->shape.d[1].n);
    emit_expr(e, s->value);
    emit_printf(e, ", %s)\n", tl_dtype(d->dtype));
    return;
  }
  case ST_MAP: {
    const TBuf *d = s->dst;
    int64_t r = d->shape.d[0].n, c = d->shape.rank == 2 ? d->shape.d[1].n : 1;
    int t = tma_of(e, s);
    if (t >= 0) {
      emit_printf(e, "%s%s = _tma%d.load(", ind, d->name, t);
      tma_offsets(e, s->value->buf, s->value->idx, s->value->nidx);
      emit_printf(e, ")\n");
      if (!is_dual(e, d)) return;
    }
    block(e, ind, s, r, c);
    /* a dual is written twice: name, then name_r by loads the compiler
       does not merge with the first (the first a descriptor's, if any) */
    for (int second = t >= 0; second < 1 + is_dual(e, d); second++) {
      emit_printf(e, "%s%s%s = ", ind, d->name, second ? "_r" : "");
      if (d->shape.rank == 1) emit_printf(e, "tl.reshape(");
      e->evict_last = second;
      tr_block_value(e, s->value, s->mask, s->other, d->dtype, r, c);
      e->evict_last = false;
      if (d->shape.rank == 1) emit_printf(e, ", (%lld,))", (long long)r);
      emit_printf(e, "\n");
    }
    return;
  }
  case ST_GEMM: {
    if (emit_gemm_thin(s)) {
      /* a broadcast product summed over k, in float32 like the accumulator
         (CUDA cores: such a product is bound by its loads) */
      emit_printf(e, "%s%s = %s + tl.sum(%s%s%s.to(tl.float32)[:, :, None] * %s%s%s.to(tl.float32)[None, :, :], axis=1)\n",
                  ind, s->dst->name, s->dst->name, s->trans_a ? "tl.trans(" : "", s->a->name, s->trans_a ? ")" : "",
                  s->trans_b ? "tl.trans(" : "", s->b->name, s->trans_b ? ")" : "");
      return;
    }
    emit_printf(e, "%s%s = tl.dot(%s%s%s, %s%s%s, %s%s)\n", ind, s->dst->name, s->trans_a ? "tl.trans(" : "",
                s->a->name, s->trans_a ? ")" : "", s->trans_b ? "tl.trans(" : "", s->b->name, s->trans_b ? ")" : "",
                s->dst->name, s->a->dtype == DT_F32 ? ", input_precision=\"ieee\"" : "");
    return;
  }
  case ST_REDUCE: {
    const char *comb = reduce_combine(s->reduce_op, s->nan_ok);
    if (!comb) {
      emit_fail(e, "a reduce with op %s", op_info[s->reduce_op].name);
      return;
    }
    /* @D: the accumulator (the identity when clearing), @A: the tile */
    const char *acc = !s->clear ? s->dst->name : tr_real(e, op_monoid(s->reduce_op)->identity);
    emit_printf(e, "%s%s = ", ind, s->dst->name);
    for (const char *p = comb; *p; p++) {
      if (p[0] == '@' && (p[1] == 'D' || p[1] == 'A')) {
        emit_printf(e, "%s", p[1] == 'D' ? acc : read_name(e, s->a));
        p++;
      } else {
        fputc(*p, e->out);
      }
    }
    emit_printf(e, "\n");
    return;
  }
  case ST_STORE:
  case ST_ATOMIC_ADD: {
    block(e, ind, s, s->ext[0], s->ext[1]);
    int t = tma_of(e, s);
    if (t >= 0) {
      emit_printf(e, "%s_tma%d.store(", ind, t);
      tma_offsets(e, s->global, s->gidx, s->ngidx);
      emit_printf(e, ", ");
      tr_block_value(e, s->value, NULL, NULL, s->global->dtype, s->ext[0], s->ext[1]);
      emit_printf(e, ")\n");
      return;
    }
    emit_printf(e, "%s%s(", ind, s->kind == ST_STORE ? "tl.store" : "tl.atomic_add");
    SExpr *zero = NULL;
    tr_pointer(e, s->global, s->ngidx ? s->gidx : &zero, s->ngidx);
    emit_printf(e, ", ");
    tr_block_value(e, s->value, NULL, NULL, s->global->dtype, s->ext[0], s->ext[1]);
    emit_printf(e, ", mask=_mask_%lld_%lld)\n", (long long)e->blk[0], (long long)e->blk[1]);
    return;
  }
  case ST_LOOP: {
    const char *inner = arena_printf(e->a, "%s    ", ind);
    emit_printf(e, "%sfor %s in range(", ind, tvar_name(s->var));
    emit_expr(e, s->lo);
    emit_printf(e, ", ");
    emit_expr(e, s->hi);
    emit_printf(e, "):\n");
    if (!s->body.len) emit_printf(e, "%spass\n", inner);
    int saved = e->ndual, saved_fwd = e->nfwd;
    find_duals(e, &s->body);
    tr_list(e, &s->body, inner);
    e->ndual = saved, e->nfwd = saved_fwd;
    return;
  }
  case ST_IF: {
    if (s->specialize) { /* Triton: the general branch alone (its layout pass rejects the branches) */
      tr_list(e, &s->orelse, ind);
      return;
    }
    const char *inner = arena_printf(e->a, "%s    ", ind);
    emit_printf(e, "%sif ", ind);
    emit_cond(e, s->cond);
    emit_printf(e, ":\n");
    if (!s->body.len) emit_printf(e, "%spass\n", inner);
    tr_list(e, &s->body, inner);
    if (s->orelse.len) {
      emit_printf(e, "%selse:\n", ind);
      tr_list(e, &s->orelse, inner);
    }
    return;
  }
  }
}

static void tr_list(Emit *e, const StmtList *l, const char *ind) {
  for (int i = 0; i < l->len; i++) tr_stmt(e, l->data[i], ind);
}

static void tr_kernel(Emit *e, const Kernel *k) {
  const TBuf **gs;
  int n = emit_kernel_globals(e, k, &gs);
  emit_printf(e, "@triton.jit\ndef %s(", k->name);
  for (int i = 0; i < n; i++) emit_printf(e, "%s%s", i ? ", " : "", e->gname[gs[i]->id]);
  emit_printf(e, "):\n");
  emit_kernel_comment(e, k, "    ");
  emit_printf(e, "    bx = tl.program_id(0)\n    by = tl.program_id(1)\n    bz = tl.program_id(2)\n");
  tma_scan(e, k);
  for (int t = 0; t < e->ntma; t++) {
    int64_t rows, cols;
    tma_matrix(e->tma[t], &rows, &cols);
    emit_printf(e, "    _tma%d = tl.make_tensor_descriptor(%s, shape=[%lld, %lld], strides=[%lld, 1], block_shape=[%lld, %lld])\n",
                t, e->gname[e->tma[t]->id], (long long)rows, (long long)cols, (long long)cols,
                (long long)e->tma_blk[t][0], (long long)e->tma_blk[t][1]);
  }
  tr_list(e, &k->body, "    ");
  e->ntma = 0;
}

static int warps(const Kernel *k) { return k->threads >= 32 ? k->threads / 32 : 1; }

/* Triton pipelines every loop of a kernel with the launch's num_stages,
   and its pipeliner keeps a buffer in shared memory per extra stage for
   every block a loop loads from global memory (compiled offline for sm_90
   with the JIT's 16-byte alignment, lm_small's kernels ask for about
   base + (stages - 1) x one trip's loads: 33/131/246/360 KiB at 1 to 4
   stages for a trip loading 112 KiB; the H200 refused the 246).  The
   launch asks for the deepest pipeline a loop of the schedule wants, cut
   to what fits TRITON_SMEM (the H200's 227 KiB less 8 for Triton's own
   scratch) with the kernel's shared tiles counted once as the base; 1 (no
   pipelining) where no second stage fits; 0 (no loop) leaves Triton's
   default.  tests/emit/check_emitted.py compiles every kernel so and
   fails one that asks for more than the SM has. */
#define TRITON_SMEM ((227 - 8) * 1024)

typedef struct Depth { int stages; bool loop; int64_t bytes; } Depth;

/* the bytes of one trip's loads: a block of the reading statement's
   extent per distinct global the loop's maps read */
typedef struct Loads { const TBuf *seen[32]; int n; int64_t elems; int64_t bytes; } Loads;
static void note_load(const SExpr *x, void *ud) {
  Loads *l = ud;
  if (x->kind != SX_LOAD) return;
  for (int i = 0; i < l->n; i++)
    if (l->seen[i] == x->buf) return;
  if (l->n < 32) l->seen[l->n++] = x->buf;
  l->bytes += l->elems * dtype_bytes(x->buf->dtype);
}
static void note_loads(const SExpr *x, void *ud) { sexpr_walk(x, note_load, ud); }
static bool load_bytes(const Stmt *s, int depth, void *ud) {
  (void)depth;
  if (s->kind != ST_MAP) return true;
  Loads *l = ud;
  l->elems = shape_numel(&s->dst->shape);
  stmt_exprs(s, note_loads, l);
  return true;
}
static bool deepest(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Depth *d = ud;
  if (s->kind != ST_LOOP) return true;
  d->loop = true;
  /* Triton pipelines innermost loops (LCE's vocabulary loop around its
     product loop asked for 32 KiB more per stage: the product's loads) */
  bool inner = false;
  for (int i = 0; i < s->body.len; i++) inner |= s->body.data[i]->kind == ST_LOOP;
  if (inner) return true;
  Loads l = {.n = 0};
  tile_walk(&s->body, load_bytes, &l);
  if (s->stages > d->stages) d->stages = s->stages;
  if (l.bytes > d->bytes) d->bytes = l.bytes;
  return true;
}
static int stages(const Kernel *k) {
  Depth d = {0, false, 0};
  tile_walk(&k->body, deepest, &d);
  if (!d.loop) return 0;
  int64_t base = 0;
  for (int b = 0; b < k->bufs.len; b++)
    if (k->bufs.data[b]->scope == SCOPE_SHARED)
      base += shape_numel(&k->bufs.data[b]->shape) * dtype_bytes(k->bufs.data[b]->dtype);
  while (d.stages > 1 && base + d.bytes * (d.stages - 1) > TRITON_SMEM) d.stages--;
  return d.stages > 1 ? d.stages : 1;
}

/* Does any kernel of the program load through descriptors? */
static bool program_tma(Emit *e) {
  bool any = false;
  for (int k = 0; k < e->tp->kernels.len; k++) {
    tma_scan(e, e->tp->kernels.data[k]);
    any |= e->ntma > 0;
  }
  e->ntma = 0;
  return any;
}

static void tr_launch(Emit *e, const Kernel *k) {
  const TBuf **gs;
  int n = emit_kernel_globals(e, k, &gs);
  if (k == e->tp->kernels.data[0] && program_tma(e))
    emit_printf(e, "    triton.set_allocator(%stma_alloc)  # the descriptors' scratch memory\n", e->pre);
  emit_printf(e, "    %s[(%lld, %lld, %lld)](", k->name, (long long)k->grid[0], (long long)k->grid[1],
              (long long)k->grid[2]);
  for (int i = 0; i < n; i++) emit_printf(e, "%s, ", e->gname[gs[i]->id]);
  int st = stages(k);
  emit_printf(e, "num_warps=%d", warps(k));
  if (st) emit_printf(e, ", num_stages=%d", st);
  emit_printf(e, ")\n");
}

/* A table for compiling the kernels without a GPU (tests/emit). */
static void tr_extras(Emit *e) {
  emit_printf(e, "# (kernel, pointer signature, grid, num_warps, num_stages or 0) of each kernel, in launch "
                 "order\nTRITON_KERNELS = [\n");
  for (int k = 0; k < e->tp->kernels.len; k++) {
    const Kernel *K = e->tp->kernels.data[k];
    const TBuf **gs;
    int n = emit_kernel_globals(e, K, &gs);
    emit_printf(e, "    (%s, {", K->name);
    for (int i = 0; i < n; i++) emit_printf(e, "%s\"%s\": \"%s\"", i ? ", " : "", e->gname[gs[i]->id], ptr_sig(gs[i]->dtype));
    emit_printf(e, "}, (%lld, %lld, %lld), %d, %d),\n", (long long)K->grid[0], (long long)K->grid[1],
                (long long)K->grid[2], warps(K), stages(K));
  }
  emit_printf(e, "]\n\n\n");
  if (program_tma(e))
    emit_printf(e,
                "def %stma_alloc(size, alignment, stream):\n"
                "    \"\"\"Global scratch memory for the kernels' tensor descriptors (triton.set_allocator).\"\"\"\n"
                "    return torch.empty(size, dtype=torch.int8, device=\"cuda\")\n\n\n",
                e->pre);
  emit_printf(e,
              "def %swarm_part(part, parts):\n"
              "    \"\"\"warm()'s worker: compile kernels part, part + parts, ... for this GPU.\"\"\"\n"
              "    ptr = {\"*bf16\": torch.bfloat16, \"*fp16\": torch.float16, \"*fp32\": torch.float32,\n"
              "           \"*i64\": torch.int64, \"*i32\": torch.int32, \"*i1\": torch.bool}\n"
              "    for fn, sig, grid, warps, stages in TRITON_KERNELS[part::parts]:\n"
              "        print(f\"compiling {fn.__name__}\", flush=True)\n"
              "        # the launch's options, so that the cache key is run()'s\n"
              "        fn.warmup(*[ptr[t] for t in sig.values()], grid=grid, num_warps=warps,\n"
              "                  **({\"num_stages\": stages} if stages else {}))\n"
              "    return 0\n\n\n",
              e->pre);
  emit_printf(e,
              "def compile_only(arch=\"sm_90a\"):\n"
              "    \"\"\"Compile every kernel for arch (sm_90a, sm_80, ...) without a GPU (Triton's\n"
              "    own ptxas); one line per kernel.  Returns 0 if every kernel built.\"\"\"\n"
              "    from triton.backends.compiler import GPUTarget\n"
              "    from triton.compiler import ASTSource\n"
              "\n"
              "    cap = int(\"\".join(c for c in arch if c.isdigit()))\n"
              "    # shared memory a block may ask for, per compute capability (bytes)\n"
              "    limit = {80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448}.get(cap)\n"
              "    failed = 0\n"
              "    for fn, sig, _grid, warps, stages in TRITON_KERNELS:\n"
              "        options = {\"num_warps\": warps, **({\"num_stages\": stages} if stages else {})}\n"
              "        # as the JIT specializes torch's allocations: every pointer 16-byte aligned\n"
              "        attrs = {(i,): [[\"tt.divisibility\", 16]] for i in range(len(sig))}\n"
              "        try:\n"
              "            k = triton.compile(ASTSource(fn=fn, signature=dict(sig), constexprs={}, attrs=attrs),\n"
              "                               target=GPUTarget(\"cuda\", cap, 32), options=options)\n"
              "            shared = k.metadata.shared\n"
              "            if limit and shared > limit:\n"
              "                raise RuntimeError(f\"asks for {shared} bytes of shared memory; {arch} has {limit}\")\n"
              "            print(f\"built {fn.__name__} for {arch}: a cubin of {len(k.asm['cubin'])} bytes, \"\n"
              "                  f\"{shared} bytes of shared memory\")\n"
              "        except Exception as e:  # noqa: BLE001\n"
              "            failed += 1\n"
              "            print(f\"FAILED {fn.__name__} for {arch}: {type(e).__name__}: {(str(e).strip().splitlines() or ['?'])[-1]}\")\n"
              "    return 1 if failed else 0\n\n\n");
}

const EmitTarget emit_triton = {
    .name = "triton",
    .op_template = tr_template,
    /* no exp_diff by default: see tr_imports; tl.exp is mul + ex2.approx
       already */
    .idiv_pos = "(%0 // %1 - tl.where(%0 % %1 < 0, 1, 0))", /* // and % truncate */
    .cast_index = "tl.cast($0, tl.float32)",
    .idx_min = "tl.minimum",
    .idx_max = "tl.maximum",
    .idx_and = "&",
    .constant = tr_constant,
    .load = tr_load,
    .tile = tr_tile,
    .var = tr_var,
    .imports = tr_imports,
    .kernel = tr_kernel,
    .launch = tr_launch,
    .extras = tr_extras,
};
