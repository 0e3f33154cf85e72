/*
 * tilelang.c: the TileLang emitter (target sm_90a).
 *
 * Each kernel becomes a @T.prim_func whose arguments are the global tensors
 * it touches, annotated T.Tensor(shape, dtype); its body is one
 * `with T.Kernel(gx, gy, gz, threads=...) as (bx, by, bz)` holding the tile
 * buffers (T.alloc_shared / T.alloc_fragment) and the statements, written
 * as TileLang writes them: T.fill, a T.Parallel loop per map (a masked map
 * is T.if_then_else, whose untaken branch the generated CUDA never
 * evaluates), T.gemm, T.reduce_*, and a T.Parallel loop with an `if` per
 * store.  A loop with constant bounds is T.Pipelined(n, num_stages=...);
 * one whose bounds depend on the block (a causal key loop) is T.serial,
 * since TileLang 0.1.15's pipeliner rejects a non-constant trip count; an
 * if is a Python if on block-uniform values (TileLang makes it a branch of
 * the generated CUDA).  Loads of bf16/f16 storage are
 * cast to float32 before arithmetic; values are cast to the destination's
 * type when stored.  Kernels are compiled lazily, on first use in run(),
 * with tilelang.compile and an explicit sm_90a target, and cached.
 * T.gemm of float32 tiles runs in TF32 on Hopper's tensor cores, so f32
 * modules with a gemm are checked with a tolerance of 5e-3 (1e-4 without).
 * T.max/T.min are CUDA's fmaxf/fminf, which drop a NaN operand: the
 * elementwise max, min and relu test for NaN first, as the graph's do.
 * T.reduce_max/T.reduce_min drop NaNs too: after each, the row's sum of
 * its NaNs (0 or NaN, through two extra fragments) is added to the
 * accumulator, so a row holding NaN reduces to NaN as the graph's does.
 */
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* max, min and relu propagate NaN as the graph's do (T.max is fmaxf) */
static const char *tl_template(Op op, ElemKind ek) {
  bool real = ek == EK_REAL;
  switch (op) {
  case OP_NEG: return "(-%0)";
  case OP_EXP: return "T.exp2(%0 * T.float32(1.4426950408889634))"; /* MUFU.EX2: expf is a libm call */
  case OP_LOG: return "T.log(%0)";
  case OP_SQRT: return "T.sqrt(%0)";
  case OP_RSQRT: return "T.rsqrt(%0)";
  case OP_TANH: return "T.tanh(%0)";
  case OP_ERF: return "T.erf(%0)";
  case OP_SIGMOID: return "(T.float32(1) / (T.float32(1) + T.exp2(%0 * T.float32(-1.4426950408889634))))";
  case OP_RELU: return "T.if_then_else(T.isnan(%0), %0, T.max(%0, T.float32(0)))";
  case OP_ABS: return "T.abs(%0)";
  case OP_CAST: return "T.Cast(\"float32\", %0)";
  case OP_ADD: return "(%0 + %1)";
  case OP_SUB: return "(%0 - %1)";
  case OP_MUL: return "(%0 * %1)";
  case OP_DIV: return "(%0 / %1)";
  case OP_IDIV: /* Lean's (Euclidean, x / 0 = 0) from TIR's floor division */
    return "T.if_then_else(%1 == 0, 0, T.floordiv(%0, T.if_then_else(%1 == 0, 1, %1)) + "
           "T.if_then_else(%1 < 0, T.if_then_else(T.floormod(%0, T.if_then_else(%1 == 0, 1, %1)) != 0, 1, 0), 0))";
  case OP_POW: return "T.pow(%0, %1)";
  case OP_MAX:
    return real ? "T.if_then_else(T.isnan(%0), %0, T.if_then_else(T.isnan(%1), %1, T.max(%0, %1)))" : "T.max(%0, %1)";
  case OP_MIN:
    return real ? "T.if_then_else(T.isnan(%0), %0, T.if_then_else(T.isnan(%1), %1, T.min(%0, %1)))" : "T.min(%0, %1)";
  case OP_LT: return "(%0 < %1)";
  case OP_LE: return "(%0 <= %1)";
  case OP_GT: return "(%0 > %1)";
  case OP_GE: return "(%0 >= %1)";
  case OP_EQ: return "(%0 == %1)";
  case OP_NE: return "(%0 != %1)";
  case OP_SELECT: return "T.if_then_else(?0, %1, %2)";
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

static void tl_constant(Emit *e, const SExpr *x, bool as_value) {
  (void)as_value;
  char buf[48];
  if (x->kind == SX_INT) {
    emit_printf(e, "%lld", (long long)x->i);
  } else if (x->f != x->f) {
    emit_printf(e, "T.float32(float(\"nan\"))");
  } else if (x->f > 1e308 || x->f < -1e308) {
    emit_printf(e, "%sT.infinity(\"float32\")", x->f < 0 ? "-" : "");
  } else {
    fmt_double(buf, sizeof buf, x->f);
    emit_printf(e, "T.float32(%s)", buf);
  }
}

static void tl_index(Emit *e, const SExpr *x) {
  fputc('[', e->out);
  if (x->nidx == 0) fputc('0', e->out);
  for (int i = 0; i < x->nidx; i++) {
    if (i) fputs(", ", e->out);
    emit_expr(e, x->idx[i]);
  }
  fputc(']', e->out);
}

static void tl_load(Emit *e, const SExpr *x) {
  bool widen = emit_is_real(x->buf->dtype) && x->buf->dtype != DT_F32;
  if (widen) emit_printf(e, "T.Cast(\"float32\", ");
  emit_printf(e, "%s", e->gname[x->buf->id]);
  tl_index(e, x);
  if (widen) emit_printf(e, ")");
}

/* b's place among the staged fragments, or -1 */
static int staged_index(const Emit *e, const TBuf *b) {
  for (int i = 0; i < e->nstaged; i++)
    if (e->staged[i] == b) return i;
  return -1;
}

/* Does a statement at top level `top` read b's staged shared copy (or,
   inside a loop, one copied earlier in its body)? */
static bool staged_at(const Emit *e, const TBuf *b, int top) {
  for (int i = 0; i < e->nlstaged; i++)
    if (e->lstaged[i] == b && e->lstage_on[i]) return true;
  int i = staged_index(e, b);
  return i >= 0 && top > e->stage_from[i];
}

/* a tile read in an expression; one of the storage type (an input's tile
   in shared memory) widened to float32 as a load is (T.isnan and the
   arithmetic then see float32) */
static void tl_tile(Emit *e, const SExpr *x) {
  bool staged = staged_at(e, x->buf, e->top);
  bool widen = emit_is_real(x->buf->dtype) && x->buf->dtype != DT_F32;
  if (widen) emit_printf(e, "T.Cast(\"float32\", ");
  emit_printf(e, "%s%s", x->buf->name, staged ? "_s" : "");
  tl_index(e, x);
  if (widen) emit_printf(e, ")");
}

/* Row statistics through shared memory.  A rank-1 fragment reduced from a
   tile whose layout no gemm fixes (FlashNorm's sum of squares of the A
   tile) gets a layout that TileLang 0.1.15 cannot reconcile with a gemm
   accumulator read beside it ("no available layout found"); a shared copy
   decouples the two.  Staged: every reduced rank-1 fragment read after the
   kernel's last loop (copied there, or after the last statement past it
   that writes the fragment), and every one reduced or loaded once by a
   top-level statement before a loop that reads it, or in a kernel without
   loops before a statement that reads it (copied right after that
   statement).  A loaded one too: TileLang 0.1.15 gives a rank-1 fragment
   of 64 rows in a 128-thread block to threads 0..63, partitions a loop
   that reads it and writes a shared tile over those 64 threads only, and
   puts a __syncthreads() inside that `if` -- a kernel that never ends
   (the transformer block's backward k24 hung on the H200; the lowered
   CUDA of every emitted kernel is now searched for such a barrier). */
static void stage_read(const SExpr *x, void *ud) {
  Emit *e = ud;
  if (x->kind != SX_TILE || x->buf->scope != SCOPE_FRAGMENT || x->buf->shape.rank != 1) return;
  if (staged_index(e, x->buf) >= 0) return;
  if (e->nstaged < 16) e->staged[e->nstaged++] = x->buf;
}

static void stage_reads(const SExpr *x, void *ud) { sexpr_walk(x, stage_read, ud); }

static bool stage_reads_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  if (s->kind == ST_MAP || s->kind == ST_STORE) stmt_exprs(s, stage_reads, ud);
  return true;
}

/* Is b the destination of a statement of this kind in k (a reduction's
   result, a product's accumulator), or (right) a product's right operand? */
typedef struct DstOf { StmtKind kind; const TBuf *b; bool right, hit; } DstOf;
static bool dst_of(const Stmt *s, int depth, void *ud) {
  (void)depth;
  DstOf *d = ud;
  d->hit |= s->kind == d->kind && (d->right ? s->b : s->dst) == d->b;
  return !d->hit;
}
static bool written_by(const Kernel *k, StmtKind kind, const TBuf *b) {
  DstOf d = {kind, b, false, false};
  tile_walk(&k->body, dst_of, &d);
  return d.hit;
}

/* the writes of b by the kernel's top-level statement i (nested ones too) */
static int writes_at(const Kernel *k, int i, const TBuf *b) {
  StmtList one = {.data = &k->body.data[i], .len = 1};
  int n;
  tile_buf_uses(&one, b, NULL, &n);
  return n;
}

static bool read_beside_swapped(const Kernel *k, const TBuf *d);

static void find_staged(Emit *e, const Kernel *k, int last) {
  e->nstaged = 0;
  /* read after the last loop */
  if (last >= 0)
    for (int i = last + 1; i < k->body.len; i++) stage_reads_stmt(k->body.data[i], 0, e);
  int n = 0;
  for (int i = 0; i < e->nstaged; i++) {
    const TBuf *b = e->staged[i];
    if (written_by(k, ST_REDUCE, b)) {
      /* copied after the last loop, or after a later statement that writes it
         (mlp_digits' logsumexp: reduced after the product loop) */
      int from = last;
      for (int j = last + 1; j < k->body.len; j++)
        if (writes_at(k, j, b)) from = j;
      e->stage_from[n] = from, e->staged[n++] = b;
    }
  }
  e->nstaged = n;
  /* reduced once at the top level, read inside a later loop */
  for (int r = 0; r < k->body.len; r++) {
    const Stmt *s = k->body.data[r];
    if ((s->kind != ST_REDUCE && s->kind != ST_MAP) || s->dst->scope != SCOPE_FRAGMENT || s->dst->shape.rank != 1)
      continue;
    int have = staged_index(e, s->dst);
    int writes;
    tile_buf_uses(&k->body, s->dst, NULL, &writes);
    /* (a fill before it, the identity a reduction accumulates onto, is
       no other write where a later map reads it beside a product's
       accumulator transposed: held out in session 22, a contrastive
       loss's backward found no layout for that map) */
    if (writes == 2 && read_beside_swapped(k, s->dst))
      for (int i = 0; i < r; i++) writes -= k->body.data[i]->kind == ST_FILL && k->body.data[i]->dst == s->dst;
    if (writes != 1 || (have < 0 && e->nstaged >= 16)) continue;
    Emit probe = *e;
    probe.nstaged = 0;
    for (int i = r + 1; i < k->body.len; i++)
      if (k->body.data[i]->kind == ST_LOOP) tile_walk(&k->body.data[i]->body, stage_reads_stmt, &probe);
      else if (last < 0) stage_reads_stmt(k->body.data[i], 0, &probe);
    if (staged_index(&probe, s->dst) < 0) continue;
    /* written once: one copy right after it serves the loop's reads and any
       after the last loop (a split's row factor, stored with the partials) */
    if (have >= 0) e->stage_from[have] = e->stage_from[have] < r ? e->stage_from[have] : r;
    else e->stage_from[e->nstaged] = r, e->staged[e->nstaged++] = s->dst;
  }
  /* reduced inside one top-level loop (a pass's row state), read inside a
     later one beside another product: copied after its loop (TileLang
     0.1.15 found no layout for the state between the two passes'
     accumulators: a backward pass of biased attention) */
  for (int r = 0; r < k->body.len; r++) {
    const Stmt *loop = k->body.data[r];
    if (loop->kind != ST_LOOP) continue;
    for (int q = 0; q < loop->body.len; q++) {
      const Stmt *x = loop->body.data[q];
      if (x->kind != ST_REDUCE || x->dst->scope != SCOPE_FRAGMENT || x->dst->shape.rank != 1) continue;
      const TBuf *b = x->dst;
      if (staged_index(e, b) >= 0 || e->nstaged >= 16) continue;
      /* written in this loop or by a fill before it only */
      bool later_write = false, read_later = false;
      for (int i = r + 1; i < k->body.len; i++) later_write |= writes_at(k, i, b) > 0;
      if (later_write) continue;
      for (int i = r + 1; i < k->body.len && !read_later; i++) {
        const Stmt *y = k->body.data[i];
        if (y->kind != ST_LOOP || !tile_list_has(&y->body, ST_GEMM)) continue;
        Emit probe = *e;
        probe.nstaged = 0;
        tile_walk(&y->body, stage_reads_stmt, &probe);
        read_later = staged_index(&probe, b) >= 0;
      }
      if (read_later) e->stage_from[e->nstaged] = r, e->staged[e->nstaged++] = b;
    }
  }
}

/* ---- a plain tile load as T.copy ----
   A map into a shared tile that only loads a rectangle of a global in the
   tile's own order, with no mask (no overhang) and no conversion, is a
   copy: T.copy lets TileLang move it with TMA and pipeline it in
   T.Pipelined loops, of any bounds.  Not in a loop that also writes a
   shared tile from the threads (a scaled operand): TileLang 0.1.15 then
   computes wrong products on the H200 (rmsnorm_matmul_16k: every element
   wrong), so such a loop keeps element-wise maps (cp.async).  On by
   default since the H200 timed it (docs/BENCHMARKS.md, 2026-12-03 sweep);
   TS_TL_COPY=0 turns it off. */
static bool tl_copy_on(void) {
  static int on = -1;
  if (on < 0) on = !(getenv("TS_TL_COPY") && *getenv("TS_TL_COPY") == '0');
  return on;
}

/* Is map s a copy: the dimensions of its load that i and j run along (di
   before dj) and their offsets? */
static bool copy_shape(const Stmt *s, int *di, int *dj, const SExpr **oi, const SExpr **oj) {
  if (!tile_map_is_copy(s) || s->dst->shape.rank != 2) return false;
  return emit_rect(s->value->idx, s->value->nidx, di, dj, oi, oj);
}

/* Does kernel k load tiles with T.copy: as its schedule says, else with
   256 threads or more and no nested loop?  The H200 runs of 2026-12-03
   (bench/results/2026-12-03-h200-defaults.json against -sweep-*.json):
   TMA made the 256-thread attention kernels 10-30% faster, the 128-thread
   ones with 32-key tiles 20% slower, a 32-thread decode kernel 50%
   slower, and the linear cross-entropy kernel (a product loop nested in
   the vocabulary loop) 50% slower.  `tilesmith tune` tries both. */
static bool nested_loop(const Stmt *s, int depth, void *ud) {
  if (s->kind == ST_LOOP && depth > 0) *(bool *)ud = true;
  return true;
}
static bool kernel_copies(const Kernel *k) {
  if (!tl_copy_on() || k->copy == 2) return false;
  if (k->copy == 1) return true;
  bool nested = false;
  tile_walk(&k->body, nested_loop, &nested);
  return k->threads >= 256 && !nested;
}

/* ---- a gemm operand read transposed from another fragment ----
   A fragment operand of T.gemm has the layout the gemm asks for, and a
   map that fills it from a gemm accumulator read transposed (acc[j, i]:
   a backward pass's dS^T or the product of an activation's gradient with
   its input) would need TileLang to move elements between threads, which
   its layout inference refuses ("fragment ... -> (32,)" errors, found on
   the backward modules of attention, SwiGLU and the transformer block).
   Such an operand is allocated in shared memory instead: the map then
   writes it from the accumulator's own layout.  So is a fragment filled
   so and then reduced by rows (a column sum of a product's result:
   sum (max (a W1) (a W2)) (dim := 0), the gradient of a mean over rows):
   TileLang gives it the transposed accumulator's layout, whose rows lie
   across the warps, and then fails to lower the reduction ("ReduceOp
   cannot lower a layout where a source index depends on a thread-owned
   reduce segment") or reduces its rows one by one with the whole block;
   from shared memory it copies the tile into a layout of its own choice
   (a warp a row). */
typedef struct TransRead { const Kernel *k; const TBuf *buf; bool hit, swapped; } TransRead;
/* a tile read at [i, j], the map's own coordinates */
static bool plain_ij(const SExpr *x) {
  return x->nidx == 2 && x->idx[0]->kind == SX_VAR && x->idx[0]->var == TV_I && x->idx[1]->kind == SX_VAR &&
         x->idx[1]->var == TV_J;
}

static void trans_read(const SExpr *x, void *ud) {
  TransRead *t = ud;
  if (x->kind == SX_TILE && x->buf->scope == SCOPE_FRAGMENT && x->nidx == 2 && x->buf != t->buf && !plain_ij(x)) {
    t->hit = true;
    /* rows and columns of a product's accumulator exchanged (not a row
       or column broadcast; a loaded tile takes the layout the read asks) */
    t->swapped |= (sexpr_uses_var(x->idx[0], TV_J) || sexpr_uses_var(x->idx[1], TV_I)) &&
                  written_by(t->k, ST_GEMM, x->buf);
  }
}
/* A loop-carried row state reduced inside a loop and read later in the
   same body by a map that also reads a product's accumulator with rows and
   columns exchanged (a streamed logsumexp over the rows of C[j, i]):
   TileLang 0.1.15 finds no layout for that map ("no available layout
   found"), as for the statistics find_staged copies between top-level
   statements; here the copy goes into the loop body, right after the
   reduction, and the rest of the body reads it. */
typedef struct ReadsBuf { const TBuf *b; bool hit; } ReadsBuf;
static void reads_buf(const SExpr *x, void *ud) {
  ReadsBuf *r = ud;
  r->hit |= x->kind == SX_TILE && x->buf == r->b;
}
static void reads_buf_expr(const SExpr *x, void *ud) { sexpr_walk(x, reads_buf, ud); }
static void swapped_expr(const SExpr *x, void *ud) { sexpr_walk(x, trans_read, ud); }

/* Does map s read d and a product's accumulator with rows and columns
   exchanged? */
static bool map_reads_beside_swapped(const Kernel *k, const Stmt *s, const TBuf *d) {
  if (s->kind != ST_MAP) return false;
  ReadsBuf rd = {d, false};
  TransRead t = {.k = k, .buf = s->dst};
  stmt_exprs(s, reads_buf_expr, &rd);
  stmt_exprs(s, swapped_expr, &t);
  return rd.hit && t.swapped;
}

typedef struct BesideSwapped { const Kernel *k; const TBuf *d; bool hit; } BesideSwapped;
static bool beside_swapped(const Stmt *s, int depth, void *ud) {
  (void)depth;
  BesideSwapped *b = ud;
  b->hit |= map_reads_beside_swapped(b->k, s, b->d);
  return !b->hit;
}
static bool read_beside_swapped(const Kernel *k, const TBuf *d) {
  BesideSwapped b = {k, d, false};
  tile_walk(&k->body, beside_swapped, &b);
  return b.hit;
}

static bool find_loop_staged(const Stmt *loop, int depth, void *ud) {
  (void)depth;
  Emit *e = ud;
  if (loop->kind != ST_LOOP) return true;
  for (int q = 0; q < loop->body.len; q++) {
    const Stmt *r = loop->body.data[q];
    if (r->kind != ST_REDUCE || r->dst->scope != SCOPE_FRAGMENT || r->dst->shape.rank != 1) continue;
    bool need = false;
    for (int m = q + 1; m < loop->body.len && !need; m++) need = map_reads_beside_swapped(e->k, loop->body.data[m], r->dst);
    if (need && e->nlstaged < 8) {
      e->lstaged[e->nlstaged] = r->dst;
      e->lstage_after[e->nlstaged] = r;
      e->lstage_on[e->nlstaged++] = false;
    }
  }
  return true;
}

typedef struct TransOp { const Kernel *k; const TBuf *buf; bool gemm, acc, trans, swapped, reduced; } TransOp;
static bool trans_op(const Stmt *s, int depth, void *ud) {
  (void)depth;
  TransOp *t = ud;
  if (s->kind == ST_GEMM && (s->a == t->buf || s->b == t->buf)) t->gemm = true;
  if (s->kind == ST_GEMM && s->dst == t->buf) t->acc = true;
  if (s->kind == ST_REDUCE && s->a == t->buf) t->reduced = true;
  if (s->kind == ST_MAP && s->dst == t->buf) {
    TransRead r = {.k = t->k, .buf = t->buf};
    sexpr_walk(s->value, trans_read, &r);
    t->trans |= r.hit;
    t->swapped |= r.swapped;
  }
  return true;
}
static bool transposed_operand(const Kernel *k, const TBuf *t) {
  TransOp o = {.k = k, .buf = t};
  tile_walk(&k->body, trans_op, &o);
  return (o.trans && o.gemm) || (o.swapped && o.reduced && !o.acc);
}

/* Is t a product's right operand?  TileLang takes it from shared memory
   only: a tile computed in registers that one product reads as its left
   operand and another as its right (a gradient g in g Wᵀ and aᵀ g) got two
   layouts ("Get different layout", held out in session 22). */
static bool right_operand(const Kernel *k, const TBuf *t) {
  DstOf d = {ST_GEMM, t, true, false};
  tile_walk(&k->body, dst_of, &d);
  return d.hit;
}

/* A map T.copy can do (see tl_copy). */
static bool copyable(const Stmt *s) {
  int di, dj;
  const SExpr *oi, *oj;
  return copy_shape(s, &di, &dj, &oi, &oj);
}

/* g[...] with dimensions di and dj as the slices [o, o + extent) of the
   rectangle (offsets oi, oj; NULL for 0), the others as indexed */
static void tl_rect(Emit *e, const char *g, SExpr *const *idx, int n, int di, int dj, const SExpr *oi,
                    const SExpr *oj, int64_t ri, int64_t rj) {
  emit_printf(e, "%s[", g);
  for (int d = 0; d < n; d++) {
    if (d) emit_printf(e, ", ");
    if (d == di || d == dj) {
      const SExpr *off = d == di ? oi : oj;
      long long ext = (long long)(d == di ? ri : rj);
      if (off) {
        emit_printf(e, "(");
        emit_expr(e, off);
        emit_printf(e, "):(");
        emit_expr(e, off);
        emit_printf(e, ") + %lld", ext);
      } else {
        emit_printf(e, "0:%lld", ext);
      }
    } else {
      emit_expr(e, idx[d]);
    }
  }
  emit_printf(e, "]");
}

static bool tl_copy(Emit *e, const Stmt *s, const char *ind) {
  const SExpr *v = s->value;
  int di, dj;
  const SExpr *oi, *oj;
  if (e->no_copy || !copy_shape(s, &di, &dj, &oi, &oj)) return false;
  emit_printf(e, "%sT.copy(", ind);
  tl_rect(e, e->gname[v->buf->id], v->idx, v->nidx, di, dj, oi, oj, s->dst->shape.d[0].n, s->dst->shape.d[1].n);
  emit_printf(e, ", %s)\n", s->dst->name);
  return true;
}

static void tl_imports(Emit *e) {
  emit_printf(e, "import tilelang\nimport tilelang.language as T\n\n"
                 "TARGET = {\"kind\": \"cuda\", \"arch\": \"sm_90a\"}\n");
}

/* value, converted to dt (a load or tile read of that type is copied as it is).
 * A computed bool is stored through T.if_then_else(v, True, False): TileLang
 * 0.1.15 vectorizes a stored comparison into a boolx16 that its CUDA code
 * generator cannot print ("Cannot convert type boolx16"), the select it
 * keeps scalar. */
static void tl_value_as(Emit *e, const SExpr *v, DType dt) {
  bool copy = (v->kind == SX_LOAD || v->kind == SX_TILE) && v->buf->dtype == dt;
  if (copy && v->kind == SX_LOAD) {
    emit_printf(e, "%s", e->gname[v->buf->id]);
    tl_index(e, v);
  } else if (dt == DT_BOOL && !copy) {
    emit_printf(e, "T.if_then_else(");
    emit_expr(e, v);
    emit_printf(e, ", True, False)");
  } else if (copy || !emit_is_real(dt) || dt == DT_F32) {
    emit_expr(e, v);
  } else {
    emit_printf(e, "T.Cast(\"%s\", ", dtype_name(dt));
    emit_expr(e, v);
    emit_printf(e, ")");
  }
}

static const char *reduce_fn(Op op) {
  return op == OP_SUM ? "T.reduce_sum" : op == OP_AMAX ? "T.reduce_max" : op == OP_AMIN ? "T.reduce_min" : NULL;
}

/* `for i, j in T.Parallel(R, C):` (or `for i in T.Parallel(R):`) */
static void parallel(Emit *e, const char *ind, int64_t r, int64_t c, bool two) {
  if (two) emit_printf(e, "%sfor i, j in T.Parallel(%lld, %lld):\n", ind, (long long)r, (long long)c);
  else emit_printf(e, "%sfor i in T.Parallel(%lld):\n", ind, (long long)r);
}

static void tl_list(Emit *e, const StmtList *l, const char *ind);

static bool loop_copies(const Emit *e, const Stmt *loop, bool no_copy);

static void tl_stmt(Emit *e, const Stmt *s, const char *ind) {
  switch (s->kind) {
  case ST_FILL:
    emit_printf(e, "%sT.fill(%s, ", ind, s->dst->name);
    tl_value_as(e, s->value, s->dst->dtype);
    emit_printf(e, ")\n");
    return;
  case ST_MAP: {
    if (tl_copy(e, s, ind)) return;
    bool two = s->dst->shape.rank == 2;
    if (!two && stmt_uses_var(s, TV_J)) {
      emit_fail(e, "a map into the rank-1 tile %s uses j", s->dst->name);
      return;
    }
    parallel(e, ind, s->dst->shape.d[0].n, two ? s->dst->shape.d[1].n : 1, two);
    emit_printf(e, "%s    %s[i%s] = ", ind, s->dst->name, two ? ", j" : "");
    if (stmt_masked(s)) {
      emit_printf(e, "T.if_then_else(");
      emit_cond(e, s->mask);
      emit_printf(e, ", ");
      tl_value_as(e, s->value, s->dst->dtype);
      emit_printf(e, ", ");
      tl_value_as(e, s->other, s->dst->dtype);
      emit_printf(e, ")\n");
    } else {
      tl_value_as(e, s->value, s->dst->dtype);
      emit_printf(e, "\n");
    }
    return;
  }
  case ST_GEMM:
    if (emit_gemm_thin(s)) { /* each element's dot product, in float32 */
      int64_t m = s->a->shape.d[s->trans_a ? 1 : 0].n, kk = s->a->shape.d[s->trans_a ? 0 : 1].n,
              n = s->b->shape.d[s->trans_b ? 0 : 1].n;
      emit_printf(e, "%sfor i, j in T.Parallel(%lld, %lld):\n", ind, (long long)m, (long long)n);
      emit_printf(e, "%s    for kk in T.serial(%lld):\n", ind, (long long)kk);
      emit_printf(e, "%s        %s[i, j] = %s[i, j] + T.Cast(\"float32\", %s[%s]) * T.Cast(\"float32\", %s[%s])\n", ind,
                  s->dst->name, s->dst->name, s->a->name, s->trans_a ? "kk, i" : "i, kk", s->b->name,
                  s->trans_b ? "j, kk" : "kk, j");
      return;
    }
    /* in a fused kernel, rows of a product are reduced and rescaled: each
       warp owns whole rows (FullRow), as TileLang's FlashAttention does */
    emit_printf(e, "%sT.gemm(%s, %s, %s%s%s%s)\n", ind, s->a->name, s->b->name, s->dst->name,
                s->trans_a ? ", transpose_A=True" : "", s->trans_b ? ", transpose_B=True" : "",
                e->k->kind == KERNEL_FUSED ? ", policy=T.GemmWarpPolicy.FullRow" : "");
    return;
  case ST_REDUCE: {
    const char *fn = reduce_fn(s->reduce_op);
    if (!fn) {
      emit_fail(e, "a reduce with op %s", op_info[s->reduce_op].name);
      return;
    }
    emit_printf(e, "%s%s(%s, %s, dim=1, clear=%s)\n", ind, fn, s->a->name, s->dst->name, s->clear ? "True" : "False");
    if (s->reduce_op != OP_SUM && s->a->shape.rank == 2 && !s->nan_ok) {
      /* T.reduce_max/min drop NaNs: add each row's sum of its NaNs (0 or NaN) */
      const char *a = s->a->name, *d = s->dst->name;
      emit_printf(e, "%sfor i, j in T.Parallel(%lld, %lld):\n", ind, (long long)s->a->shape.d[0].n,
                  (long long)s->a->shape.d[1].n);
      emit_printf(e, "%s    %s_nan[i, j] = T.if_then_else(T.isnan(%s[i, j]), %s[i, j], T.float32(0))\n", ind, a, a, a);
      emit_printf(e, "%sT.reduce_sum(%s_nan, %s_nan, dim=1, clear=True)\n", ind, a, d);
      emit_printf(e, "%sfor i in T.Parallel(%lld):\n", ind, (long long)s->dst->shape.d[0].n);
      emit_printf(e, "%s    %s[i] = %s[i] + %s_nan[i]\n", ind, d, d, d);
    }
    return;
  }
  case ST_STORE:
  case ST_ATOMIC_ADD: {
    bool two = s->ext[1] != 1 || stmt_uses_var(s, TV_J);
    parallel(e, ind, s->ext[0], s->ext[1], two);
    const char *in2 = "    ";
    if (stmt_masked(s)) {
      emit_printf(e, "%s    if ", ind);
      emit_cond(e, s->mask);
      emit_printf(e, ":\n");
      in2 = "        ";
    }
    const char *g = e->gname[s->global->id];
    emit_printf(e, "%s%s", ind, in2);
    if (s->kind == ST_ATOMIC_ADD) emit_printf(e, "T.atomic_add(%s[", g);
    else emit_printf(e, "%s[", g);
    if (s->ngidx == 0) emit_printf(e, "0");
    for (int d = 0; d < s->ngidx; d++) {
      if (d) emit_printf(e, ", ");
      emit_expr(e, s->gidx[d]);
    }
    emit_printf(e, s->kind == ST_ATOMIC_ADD ? "], " : "] = ");
    tl_value_as(e, s->value, s->global->dtype);
    emit_printf(e, s->kind == ST_ATOMIC_ADD ? ")\n" : "\n");
    return;
  }
  case ST_LOOP: {
    const char *inner = arena_printf(e->a, "%s    ", ind);
    bool from0 = s->lo->kind == SX_INT && s->lo->i == 0;
    /* TileLang 0.1.15's software pipeliner needs a constant trip count
       (a causal loop's bound depends on the block) for cp.async copies
       (element-wise maps): those loops run unpipelined; with T.copy (TMA)
       it pipelines any bounds */
    bool was = e->no_copy;
    e->no_copy = !loop_copies(e, s, was);
    bool fixed = (from0 && s->hi->kind == SX_INT) || !e->no_copy;
    int stages = fixed ? s->stages : 0;
    emit_printf(e, "%sfor %s in T.%s(", ind, tvar_name(s->var), fixed ? "Pipelined" : "serial");
    if (!from0) {
      emit_expr(e, s->lo);
      emit_printf(e, ", ");
    }
    emit_expr(e, s->hi);
    if (fixed) emit_printf(e, ", num_stages=%d", stages);
    emit_printf(e, "):\n");
    if (!s->body.len) emit_printf(e, "%spass\n", inner);
    tl_list(e, &s->body, inner);
    e->no_copy = was;
    return;
  }
  case ST_IF: {
    const char *inner = arena_printf(e->a, "%s    ", ind);
    emit_printf(e, "%sif ", ind);
    emit_cond(e, s->cond);
    emit_printf(e, ":\n");
    if (!s->body.len) emit_printf(e, "%spass\n", inner);
    tl_list(e, &s->body, inner);
    if (s->orelse.len) {
      emit_printf(e, "%selse:\n", ind);
      tl_list(e, &s->orelse, inner);
    }
    return;
  }
  }
}

static void tl_list(Emit *e, const StmtList *l, const char *ind) {
  bool on[8];
  memcpy(on, e->lstage_on, sizeof on);
  for (int i = 0; i < l->len; i++) {
    tl_stmt(e, l->data[i], ind);
    for (int q = 0; q < e->nlstaged; q++)
      if (e->lstage_after[q] == l->data[i]) {
        emit_printf(e, "%sfor i in T.Parallel(%lld):\n%s    %s_s[i] = %s[i]\n", ind,
                    (long long)e->lstaged[q]->shape.d[0].n, ind, e->lstaged[q]->name, e->lstaged[q]->name);
        e->lstage_on[q] = true;
      }
  }
  /* the copies serve the rest of their body only */
  memcpy(e->lstage_on, on, sizeof on);
}

static Scope emitted_scope(const Emit *e, const Kernel *k, const TBuf *t);

static void scratch_tile(Emit *e, const char *name, const char *suffix, const Shape *sh, bool shared) {
  const char *alloc = shared ? "shared" : "fragment";
  if (sh->rank == 1)
    emit_printf(e, "        %s%s = T.alloc_%s((%lld,), \"float32\")\n", name, suffix, alloc, (long long)sh->d[0].n);
  else
    emit_printf(e, "        %s%s = T.alloc_%s((%lld, %lld), \"float32\")\n", name, suffix, alloc,
                (long long)sh->d[0].n, (long long)sh->d[1].n);
}

static void fragment(Emit *e, const char *name, const char *suffix, const Shape *sh) {
  scratch_tile(e, name, suffix, sh, false);
}

/* The fragments the NaN check of each amax/amin reduce uses (once per pair
   of source and destination tiles, in program order). */
typedef struct NanBufs { Emit *e; const Stmt *seen[64]; int n; } NanBufs;

static bool declare_nan(const Stmt *s, int depth, void *ud) {
  (void)depth;
  NanBufs *nb = ud;
  if (s->kind != ST_REDUCE || s->reduce_op == OP_SUM || s->a->shape.rank != 2 || s->nan_ok) return true;
  for (int i = 0; i < nb->n; i++)
    if (nb->seen[i]->a == s->a && nb->seen[i]->dst == s->dst) return true;
  if (nb->n < 64) nb->seen[nb->n++] = s;
  /* beside a source moved to shared memory, in shared memory too: its
     reduction then gets the layout TileLang gives the source's (a column
     maximum: both row results in one layout, each row on a warp) */
  scratch_tile(nb->e, s->a->name, "_nan", &s->a->shape, emitted_scope(nb->e, nb->e->k, s->a) == SCOPE_SHARED);
  fragment(nb->e, s->dst->name, "_nan", &s->dst->shape);
  return true;
}

/* Rows reduced by warps.  TileLang 0.1.15 lays a 2-D fragment's elements
   over the threads in flat order, so a block of R rows of C >= threads
   columns spreads every row over the whole block, and reducing its rows is
   R block-wide AllReduces in sequence, each behind barriers (mlp_digits'
   RMSNorm over 64 rows of 256: 64 of them; on the H200 each such kernel
   took about 35 us, the whole Triton module 44).  The 2-D fragments that
   maps and stores tie together (a map's destination and the fragments it
   reads) form groups; a group of one shape that no gemm touches, that is
   reduced, whose statements read no rank-1 fragment but its own row
   results (and what maps compute from them), and whose row results no
   statement over other 2-D fragments reads but through their staged
   shared copies, is annotated with one layout for all its members:
   each row on the lanes of one warp (up to 32 lanes, 8 contiguous columns
   each, the layout TileLang gives where it vectorizes the loads by 8) and
   the lane groups over the rows.  A row's reduction becomes thread-local
   sums and shuffles within a warp, with no barrier. */
typedef struct RowGroups {
  int n;
  const TBuf *buf[64]; /* the kernel's 2-D fragments */
  int parent[64];      /* union-find over buf */
  bool bad[64], reduced[64];
  bool looped[64], accumulated[64]; /* reduced inside a loop; written inside one */
  const Stmt *gemm[16];  /* the kernel's products, in program order */
  int ngemm;
} RowGroups;

static int rg_index(const RowGroups *g, const TBuf *b) {
  for (int i = 0; i < g->n; i++)
    if (g->buf[i] == b) return i;
  return -1;
}

static int rg_find(RowGroups *g, int i) {
  while (g->parent[i] != i) i = g->parent[i] = g->parent[g->parent[i]];
  return i;
}

static void rg_union(RowGroups *g, int a, int b) {
  a = rg_find(g, a), b = rg_find(g, b);
  if (a == b) return;
  g->parent[b] = a;
  g->bad[a] |= g->bad[b];
  g->reduced[a] |= g->reduced[b];
  g->looped[a] |= g->looped[b];
  g->accumulated[a] |= g->accumulated[b];
}

/* One statement's reads: the 2-D fragments (joined into the statement's
   group when `join`, else only its first noted) and the rank-1 ones
   (checked once the groups are known). */
typedef struct RgStmt { RowGroups *g; bool join; int group; const TBuf *r1[16]; int nr1; bool overflow; } RgStmt;

static void rg_read(const SExpr *x, void *ud) {
  RgStmt *st = ud;
  if (x->kind != SX_TILE || x->buf->scope != SCOPE_FRAGMENT) return;
  if (x->buf->shape.rank == 2) {
    int i = rg_index(st->g, x->buf);
    if (i < 0) return;
    /* read at other than [i, j] (a transpose): the loop's layout cannot be
       both fragments' row layout (TileLang: "layout infer conflict") */
    if (!plain_ij(x)) st->g->bad[rg_find(st->g, i)] = true;
    if (st->group < 0) st->group = i;
    else if (st->join) rg_union(st->g, st->group, i);
  } else if (st->nr1 < 16) st->r1[st->nr1++] = x->buf;
  else st->overflow = true;
}

static void rg_reads(const SExpr *x, void *ud) { sexpr_walk(x, rg_read, ud); }

static bool rg_pass1(const Stmt *s, int depth, void *ud) {
  RowGroups *g = ud;
  switch (s->kind) {
  case ST_GEMM: {
    if (g->ngemm < 16) g->gemm[g->ngemm++] = s;
    const TBuf *t[3] = {s->dst, s->a, s->b};
    for (int q = 0; q < 3; q++) {
      int i = rg_index(g, t[q]);
      if (i >= 0) g->bad[rg_find(g, i)] = true;
    }
    break;
  }
  case ST_REDUCE: {
    int i = rg_index(g, s->a);
    if (i >= 0) g->reduced[rg_find(g, i)] = true;
    if (i >= 0 && depth > 0) g->looped[rg_find(g, i)] = true;
    break;
  }
  case ST_MAP:
  case ST_STORE:
  case ST_ATOMIC_ADD: {
    RgStmt st = {.g = g, .join = true, .group = s->kind == ST_MAP ? rg_index(g, s->dst) : -1};
    stmt_exprs(s, rg_reads, &st);
    /* a rank-1 fragment or a shared tile written from a group's members is
       left alone: only stores and shared tiles may read them */
    if (s->kind == ST_MAP && s->dst->scope == SCOPE_FRAGMENT && s->dst->shape.rank == 1 && st.group >= 0)
      g->bad[rg_find(g, st.group)] = true;
    int d = s->kind == ST_MAP ? rg_index(g, s->dst) : -1;
    if (d >= 0 && depth > 0) g->accumulated[rg_find(g, d)] = true;
    break;
  }
  case ST_FILL:
  case ST_LOOP:
  case ST_IF: break;
  }
  return true;
}

/* Product operands kept in shared memory though the tile IR computes them
   in registers.  A computed A tile (P of attention) is a register operand
   of the product (wgmma from registers); its layout is the product's, and
   the fragments maps tie to it take that layout too.  Where those are
   reduced by rows and no product's accumulator among them pins a layout a
   reduction can lower (scores loaded, not computed by a product),
   TileLang 0.1.15 fails to lower the reduction ("ReduceOp cannot lower a
   layout where a source index depends on a thread-owned reduce segment":
   the attention backward's forward pass over stored scores, B=2, H=8,
   N=1024).  Such an A is written to shared memory instead, and its group
   gets the layout of its loads. */
static bool shared_a_operand(const Emit *e, const TBuf *t) {
  for (int i = 0; i < e->nshared_a; i++)
    if (e->shared_a[i] == t) return true;
  return false;
}

/* The kernel's 2-D register fragments (those left in registers by the
   shared operands found so far) joined into groups by the maps and stores
   that tie them (rg_pass1, which also lists the products); NULL past 64
   fragments (not followed). */
static RowGroups *rg_build(const Emit *e, const Kernel *k) {
  RowGroups *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  for (int b = 0; b < k->bufs.len; b++) {
    const TBuf *t = k->bufs.data[b];
    if (t->scope != SCOPE_FRAGMENT || t->shape.rank != 2 || shared_a_operand(e, t)) continue;
    if (g->n == 64) {
      free(g);
      return NULL;
    }
    g->buf[g->n] = t, g->parent[g->n] = g->n;
    g->bad[g->n] = transposed_operand(k, t);
    g->n++;
  }
  tile_walk(&k->body, rg_pass1, g);
  return g;
}

static void find_shared_a_operands(Emit *e, const Kernel *k) {
  e->nshared_a = 0;
  RowGroups *g = rg_build(e, k);
  if (!g) return;
  bool pinned[64] = {false};
  for (int q = 0; q < g->ngemm; q++) {
    int d = rg_index(g, g->gemm[q]->dst);
    if (d >= 0) pinned[rg_find(g, d)] = true;
  }
  for (int q = 0; q < g->ngemm; q++) {
    int a = rg_index(g, g->gemm[q]->a);
    if (a < 0 || !g->reduced[rg_find(g, a)] || pinned[rg_find(g, a)] || e->nshared_a == 8) continue;
    e->shared_a[e->nshared_a++] = g->gemm[q]->a;
  }
  free(g);
}

/* A 2-D fragment of fewer elements than the block has threads, only
   written by maps and read by a map into a shared tile (a column of row
   statistics loaded in a product's K loop and read along the rows of a
   scaled operand).  TileLang 0.1.15 gives such a fragment to some of the
   threads, partitions the loop that reads it over those threads only and
   puts a __syncthreads() inside that `if`: a kernel that never ends
   (info_nce_big's backward k13, [1, 128] in a 256-thread block).  In
   shared memory it links no layout; the rank-1 ones are staged instead
   (find_staged). */
typedef struct SmallFrag { const TBuf *t; bool into_shared, other; } SmallFrag;
static void small_frag_read(const SExpr *x, void *ud) {
  SmallFrag *f = ud;
  if (x->kind == SX_TILE && x->buf == f->t) f->into_shared = true;
}
static void small_frag_reads(const SExpr *x, void *ud) { sexpr_walk(x, small_frag_read, ud); }
static bool small_frag_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  SmallFrag *f = ud;
  if (s->kind == ST_GEMM || s->kind == ST_REDUCE)
    f->other |= s->dst == f->t || s->a == f->t || s->b == f->t;
  if (s->kind == ST_FILL) f->other |= s->dst == f->t;
  if (s->kind == ST_MAP && s->dst->scope == SCOPE_SHARED && s->dst != f->t) stmt_exprs(s, small_frag_reads, f);
  return true;
}
static bool small_fragment_into_shared(const Kernel *k, const TBuf *t) {
  if (t->scope != SCOPE_FRAGMENT || t->shape.rank != 2 || t->shape.d[0].n * t->shape.d[1].n >= k->threads) return false;
  SmallFrag f = {.t = t};
  tile_walk(&k->body, small_frag_stmt, &f);
  return f.into_shared && !f.other;
}

/* where a tile buffer lives in the module: the tile IR's scope, but for
   the product operands written to shared memory instead of registers and
   the small fragments read into shared tiles */
static Scope emitted_scope(const Emit *e, const Kernel *k, const TBuf *t) {
  return t->scope == SCOPE_FRAGMENT &&
                 (transposed_operand(k, t) || right_operand(k, t) || shared_a_operand(e, t) ||
                  small_fragment_into_shared(k, t))
             ? SCOPE_SHARED
             : t->scope;
}

typedef struct Fills { const Emit *e; bool hit; } Fills;

static bool moved_fill(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Fills *f = ud;
  if (s->kind == ST_MAP && s->dst->scope == SCOPE_FRAGMENT && emitted_scope(f->e, f->e->k, s->dst) == SCOPE_SHARED)
    f->hit = true;
  return !f->hit;
}

/* Does a loop load its tiles by T.copy?  Not where the kernel's loads are
   element-wise (no_copy) and not where the threads also fill a shared
   tile in it, one of the tile IR's or an operand moved to shared memory
   here (TileLang 0.1.15 then computes wrong products: see above). */
static bool loop_copies(const Emit *e, const Stmt *loop, bool no_copy) {
  if (no_copy || tile_thread_fills(&loop->body, copyable)) return false;
  Fills f = {e, false};
  tile_walk(&loop->body, moved_fill, &f);
  return !f.hit;
}

/* The rank-1 fragments a group's row layout reaches: the results of its
   reductions and what maps compute from them.  A map or store over the
   group's fragments may read only those; one over other 2-D fragments (a
   gemm accumulator rescaled by a row factor: online softmax) must read
   none of them, or the two layouts meet in one loop. */
typedef struct RgTaint {
  RowGroups *g;
  const Emit *e; /* its staged fragments: a read of the shared copy links no layout */
  int grp, top;  /* the group; the top-level statement walked */
  bool taint[64];
  const TBuf *r1[64];
  int nr1;
  bool grew, bad;
} RgTaint;

static int rt_index(RgTaint *t, const TBuf *b, bool add) {
  for (int i = 0; i < t->nr1; i++)
    if (t->r1[i] == b) return i;
  if (!add || t->nr1 >= 64) return -1;
  t->r1[t->nr1] = b;
  t->taint[t->nr1] = false;
  return t->nr1++;
}

static bool rt_grow(const Stmt *s, int depth, void *ud) {
  (void)depth;
  RgTaint *t = ud;
  if (s->kind == ST_REDUCE && rg_index(t->g, s->a) >= 0 && rg_find(t->g, rg_index(t->g, s->a)) == t->grp) {
    int i = rt_index(t, s->dst, true);
    if (i < 0) t->bad = true; /* more rank-1 fragments than followed: leave the group alone */
    else if (!t->taint[i]) t->taint[i] = t->grew = true;
  }
  if (s->kind == ST_MAP && s->dst->scope == SCOPE_FRAGMENT && s->dst->shape.rank == 1) {
    RgStmt st = {.g = t->g, .group = -1};
    stmt_exprs(s, rg_reads, &st);
    bool from = false;
    for (int q = 0; q < st.nr1; q++) {
      if (staged_at(t->e, st.r1[q], t->top)) continue;
      int i = rt_index(t, st.r1[q], false);
      from |= i >= 0 && t->taint[i];
    }
    int d = from ? rt_index(t, s->dst, true) : -1;
    if (from && d < 0) t->bad = true;
    else if (from && !t->taint[d]) t->taint[d] = t->grew = true;
  }
  return true;
}

static bool rt_check(const Stmt *s, int depth, void *ud) {
  (void)depth;
  RgTaint *t = ud;
  if (s->kind != ST_MAP && s->kind != ST_STORE && s->kind != ST_ATOMIC_ADD) return true;
  RgStmt st = {.g = t->g, .group = s->kind == ST_MAP ? rg_index(t->g, s->dst) : -1};
  stmt_exprs(s, rg_reads, &st);
  /* the statement's 2-D fragments are one group (pass 1 joined them) */
  bool two_d = st.group >= 0 || (s->kind == ST_MAP && s->dst->scope == SCOPE_FRAGMENT && s->dst->shape.rank == 2);
  bool into = st.group >= 0 && rg_find(t->g, st.group) == t->grp;
  if (st.overflow && two_d) t->bad = true;
  /* a statement over no 2-D fragment that reads the group's row results
     beside other rank-1 fragments: their layouts meet in its loop (a
     store of S0 / S1, S0 reduced from a product's accumulator and S1
     from the group: "no available layout found") */
  bool some = false, other = false;
  for (int q = 0; q < st.nr1; q++) {
    if (staged_at(t->e, st.r1[q], t->top)) continue;
    int i = rt_index(t, st.r1[q], false);
    bool tainted = i >= 0 && t->taint[i];
    if (into ? !tainted : two_d && tainted) t->bad = true;
    some |= tainted, other |= !tainted;
  }
  if (some && other) t->bad = true;
  return true;
}

/* each top-level statement alone, so that a read knows whether it is of
   the fragment or of its staged copy */
static void rt_walk(RgTaint *t, const Kernel *k, StmtVisit fn) {
  for (int i = 0; i < k->body.len; i++) {
    StmtList one = {.data = &k->body.data[i], .len = 1};
    t->top = i;
    tile_walk(&one, fn, t);
  }
}

static bool rg_group_ok(RowGroups *g, const Emit *e, const Kernel *k, int grp) {
  RgTaint *t = calloc(1, sizeof *t);
  if (!t) return false;
  t->g = g, t->e = e, t->grp = grp;
  do {
    t->grew = false;
    rt_walk(t, k, rt_grow);
  } while (t->grew);
  rt_walk(t, k, rt_check);
  bool ok = !t->bad;
  free(t);
  return ok;
}

/* pipelined: the kernel's loops load by T.copy, which the annotation
   forces element-wise (below): a group written in a loop and reduced only
   outside loops (a reduction deferred past its loop, defer.c) is left to
   TileLang's layout then, so that the loads stay bulk copies (one written
   and reduced before the loop keeps it: qk-norm attention's sum of
   squares finds no layout without it) */
static int annotate_row_layouts(Emit *e, const Kernel *k, bool pipelined) {
  RowGroups *g = rg_build(e, k);
  if (!g) return 0; /* more fragments than followed: no annotation */
  for (int i = 0; i < g->n; i++) { /* one shape a group */
    int r = rg_find(g, i);
    const Shape *a = &g->buf[i]->shape, *b = &g->buf[r]->shape;
    if (a->d[0].n != b->d[0].n || a->d[1].n != b->d[1].n) g->bad[r] = true;
  }
  for (int i = 0; i < g->n; i++)
    if (rg_find(g, i) == i && !g->bad[i] && g->reduced[i] && !rg_group_ok(g, e, k, i)) g->bad[i] = true;
  int n = 0;
  for (int i = 0; i < g->n; i++) {
    int r = rg_find(g, i);
    if (g->bad[r] || !g->reduced[r] || (pipelined && !g->looped[r] && g->accumulated[r])) continue;
    /* v contiguous columns a lane (16-byte loads of bf16), tpr lanes a
       row, threads / tpr rows a pass of the block */
    int64_t rows = g->buf[i]->shape.d[0].n, cols = g->buf[i]->shape.d[1].n, threads = k->threads, v = 8, tpr = 32;
    while (v > 1 && cols % v) v /= 2;
    while (tpr > 1 && (cols / v) % tpr) tpr /= 2;
    if (rows < 2 || threads % tpr || rows % (threads / tpr)) continue;
    long long R = rows, C = cols, V = v, L = tpr, P = threads / tpr;
    emit_printf(e,
                "%s%s: T.Fragment((%lld, %lld), forward_thread_fn=lambda i, j: (i %% %lld) * %lld + (j // %lld) %% %lld, "
                "forward_index_fn=lambda i, j: (i // %lld) * %lld + (j // %lld) * %lld + j %% %lld)",
                n++ ? ", " : "        T.annotate_layout({", g->buf[i]->name, R, C, P, L, V, L, P, C / L, V * L, V, V);
  }
  if (n) emit_printf(e, "})\n");
  free(g);
  return n;
}

/* a map written as T.copy inside a loop (T.Pipelined: TileLang
   warp-specializes it), by loop_copies' rule */
static bool copies_in_pipeline(const Emit *e, const StmtList *l, bool in_loop) {
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->kind == ST_MAP && in_loop && copyable(s)) return true;
    if (s->kind == ST_LOOP && loop_copies(e, s, false) && copies_in_pipeline(e, &s->body, true)) return true;
    if (s->kind == ST_IF && (copies_in_pipeline(e, &s->body, in_loop) || copies_in_pipeline(e, &s->orelse, in_loop)))
      return true;
  }
  return false;
}

/* Does the kernel have a top-level loop whose loads are copies beside one
   whose threads fill a shared tile (so loads element-wise)?  TileLang
   0.1.15 splits the block into a producer and consumers for the first and
   runs the second in the consumers: info_nce_big's backward k15 (a row
   sum accumulated over a T.copy loop, then a product whose A tile it
   scales) gave other results at every launch on an H100 (its row sums off
   by up to 3e-3), and loaded element-wise it was deterministic and as
   accurate as Triton's (bench/exp/s21/check3.sh).  Such a kernel loads
   element-wise throughout. */
static bool mixed_pipelines(const Emit *e, const Kernel *k) {
  bool copies = false, fills = false;
  for (int i = 0; i < k->body.len; i++) {
    const Stmt *s = k->body.data[i];
    if (s->kind != ST_LOOP) continue;
    StmtList one = {.data = &k->body.data[i], .len = 1};
    if (copies_in_pipeline(e, &one, false)) copies = true;
    else if (!loop_copies(e, s, false)) fills = true;
  }
  return copies && fills;
}

/* ---- a product's result stored through shared memory ----
   A kernel whose loops load by T.copy (TMA) and that ends by storing a 2-D
   tile of its product, unmasked, into a rectangle of a 16-bit global (the
   last dimension along j) may write the tile into shared memory and move
   it with one T.copy (a TMA store) instead of each thread's scattered
   2-element stores.  On an H100 that took rmsnorm_matmul_16k's product
   kernel from 0.98-1.04 to 0.94-1.01 ms and the product alone from
   0.90-0.95 to 0.86-0.91 (bench/exp/s16, three rounds each); not yet timed
   over the benchmark set, so off by default: the schedule's store=1 turns
   it on for a kernel (`opt --schedule store=1`; `tune` tries it),
   TS_TL_STAGE_STORE=1 for every kernel whose schedule leaves it open
   (bench/prepare.sh STAGED=1 writes the tilelang-staged variant).  The
   shared tile is TileLang's to place: its lifetime does not meet the
   loop's stages, which TileLang's storage rewrite shares with it. */
static bool stage_store_on(void) {
  static int on = -1;
  if (on < 0) on = getenv("TS_TL_STAGE_STORE") && *getenv("TS_TL_STAGE_STORE") == '1';
  return on;
}

/* the store's dimensions along i and j (di before dj, dj the last) and
   their offsets, if it writes a rectangle as staged stores need */
static bool store_shape(const Stmt *s, int *di, int *dj, const SExpr **oi, const SExpr **oj) {
  return emit_rect(s->gidx, s->ngidx, di, dj, oi, oj) && *dj == s->ngidx - 1;
}

static bool tl_staged_store(Emit *e, const Kernel *k, const Stmt *s, int at) {
  int di, dj;
  const SExpr *oi, *oj;
  bool on = k->store == 1 || (k->store == 0 && stage_store_on());
  if (!on || e->no_copy || s->kind != ST_STORE || !kernel_has(k, ST_GEMM)) return false;
  DType dt = s->global->dtype;
  if (stmt_masked(s) || (dt != DT_BF16 && dt != DT_F16)) return false;
  if (s->ext[0] < 16 || s->ext[1] < 16 || !store_shape(s, &di, &dj, &oi, &oj)) return false;
  long long r = (long long)s->ext[0], c = (long long)s->ext[1];
  emit_printf(e, "        Ost%d = T.alloc_shared((%lld, %lld), \"%s\")\n", at, r, c, dtype_name(dt));
  parallel(e, "        ", r, c, true);
  emit_printf(e, "            Ost%d[i, j] = ", at);
  tl_value_as(e, s->value, dt);
  emit_printf(e, "\n        T.copy(Ost%d, ", at);
  tl_rect(e, e->gname[s->global->id], s->gidx, s->ngidx, di, dj, oi, oj, s->ext[0], s->ext[1]);
  emit_printf(e, ")\n");
  return true;
}

static void tl_kernel(Emit *e, const Kernel *k) {
  const TBuf **gs;
  int n = emit_kernel_globals(e, k, &gs);
  emit_printf(e, "@T.prim_func\ndef %s(\n", k->name);
  for (int i = 0; i < n; i++)
    emit_printf(e, "    %s: T.Tensor(%s, \"%s\"),\n", e->gname[gs[i]->id], emit_shape_tuple(e, gs[i]),
                dtype_name(gs[i]->dtype));
  emit_printf(e, "):\n");
  emit_kernel_comment(e, k, "    ");
  e->no_copy = !kernel_copies(k); /* decided once per kernel; a loop may turn it off inside */
  find_shared_a_operands(e, k);
  emit_printf(e, "    with T.Kernel(%lld, %lld, %lld, threads=%d) as (bx, by, bz):\n", (long long)k->grid[0],
              (long long)k->grid[1], (long long)k->grid[2], k->threads);
  /* a product kernel of a 2-D grid of many blocks visits its blocks in
     panels of 10 rows, so that the blocks running at once share operand
     tiles in L2: on the H200, swiglu_mlp_8k 4.05 -> 3.70 ms and
     rmsnorm_matmul_16k 1.42 -> 1.31 ms, the other product cases within
     the run-to-run spread (bench/results/2026-12-04-h200-session6*.json;
     swiglu 4.18 -> 3.89 in session 5's run).  TS_TL_SWIZZLE=N sets the
     panel, 0 turns it off. */
  static int swizzle = -1;
  if (swizzle < 0) swizzle = getenv("TS_TL_SWIZZLE") ? atoi(getenv("TS_TL_SWIZZLE")) : 10;
  if (swizzle > 0 && kernel_has(k, ST_GEMM) && k->grid[0] > 1 && k->grid[1] > swizzle &&
      k->grid[0] * k->grid[1] >= 512)
    emit_printf(e, "        T.use_swizzle(panel_size=%d)\n", swizzle);
  for (int b = 0; b < k->bufs.len; b++) {
    const TBuf *t = k->bufs.data[b];
    Scope scope = emitted_scope(e, k, t);
    char shape[64];
    if (t->shape.rank == 1) snprintf(shape, sizeof shape, "(%lld,)", (long long)t->shape.d[0].n);
    else snprintf(shape, sizeof shape, "(%lld, %lld)", (long long)t->shape.d[0].n, (long long)t->shape.d[1].n);
    switch (scope) {
    case SCOPE_SHARED:
      emit_printf(e, "        %s = T.alloc_shared(%s, \"%s\")\n", t->name, shape, dtype_name(t->dtype));
      break;
    case SCOPE_FRAGMENT:
      emit_printf(e, "        %s = T.alloc_fragment(%s, \"%s\")\n", t->name, shape, dtype_name(t->dtype));
      break;
    case SCOPE_GLOBAL: emit_fail(e, "kernel %s: a tile buffer %s in global scope", k->name, t->name); break;
    }
  }
  NanBufs nb = {.e = e};
  tile_walk(&k->body, declare_nan, &nb);
  int last = -1;
  for (int i = 0; i < k->body.len; i++)
    if (k->body.data[i]->kind == ST_LOOP) last = i;
  e->nstaged = e->nlstaged = 0;
  if (k->kind == KERNEL_FUSED) {
    find_staged(e, k, last);
    tile_walk(&k->body, find_loop_staged, e);
  }
  for (int i = 0; i < e->nstaged; i++)
    emit_printf(e, "        %s_s = T.alloc_shared((%lld,), \"%s\")\n", e->staged[i]->name,
                (long long)e->staged[i]->shape.d[0].n, dtype_name(e->staged[i]->dtype));
  for (int i = 0; i < e->nlstaged; i++) {
    bool dup = staged_index(e, e->lstaged[i]) >= 0; /* (its copy declared already) */
    for (int j = 0; j < i; j++) dup |= e->lstaged[j] == e->lstaged[i];
    if (!dup)
      emit_printf(e, "        %s_s = T.alloc_shared((%lld,), \"%s\")\n", e->lstaged[i]->name,
                  (long long)e->lstaged[i]->shape.d[0].n, dtype_name(e->lstaged[i]->dtype));
  }
  /* after find_staged: a staged read links no layout.  A kernel with an
     annotated layout loads element-wise: where a pipelined loop's tiles
     come by T.copy TileLang splits the block into a producer and
     consumers, and the layout over the block's threads then went wrong
     (rmsnorm_matmul_16k at 128 x 256 on 256 threads: 4.5% of the outputs
     non-finite on an H100; the same kernel without T.copy correct, 1.209
     ms), while without the annotation TileLang finds no layout for some
     such fragments ("no available layout found": a softmax backward's tie
     indicator reduced in its key loop, qk-norm attention's sum of
     squares), so the annotation stays and the copies go.  The price: a
     loop whose bounds depend on the block (a causal key loop) is then not
     pipelined (cp.async needs a constant trip count), and the cost model
     does not know it; unmeasured (causal qk-norm attention) */
  bool pipelined = !e->no_copy && copies_in_pipeline(e, &k->body, false);
  if (pipelined && mixed_pipelines(e, k)) e->no_copy = true, pipelined = false;
  if (annotate_row_layouts(e, k, pipelined) && pipelined) e->no_copy = true;
  for (int i = 0; i < k->body.len; i++) {
    /* each staged fragment is copied before the first statement that reads its copy */
    for (int q = 0; q < e->nstaged; q++)
      if (e->stage_from[q] == i - 1)
        emit_printf(e, "        for i in T.Parallel(%lld):\n            %s_s[i] = %s[i]\n",
                    (long long)e->staged[q]->shape.d[0].n, e->staged[q]->name, e->staged[q]->name);
    e->top = i;
    if (!tl_staged_store(e, k, k->body.data[i], i)) tl_stmt(e, k->body.data[i], "        ");
  }
  e->top = 0;
  e->nstaged = e->nlstaged = 0;
  e->nshared_a = 0;
  if (!k->body.len) emit_printf(e, "        pass\n");
}

static void tl_launch(Emit *e, const Kernel *k) {
  const TBuf **gs;
  int n = emit_kernel_globals(e, k, &gs);
  emit_printf(e, "    compiled_kernel(\"%s\")(", k->name);
  for (int i = 0; i < n; i++) emit_printf(e, "%s%s", i ? ", " : "", e->gname[gs[i]->id]);
  emit_printf(e, ")\n");
}

static void tl_extras(Emit *e) {
  emit_printf(e, "PRIM_FUNCS = {\n");
  for (int k = 0; k < e->tp->kernels.len; k++)
    emit_printf(e, "    \"%s\": %s,\n", e->tp->kernels.data[k]->name, e->tp->kernels.data[k]->name);
  emit_printf(e, "}\n_COMPILED = {}\n\n\n"
                 "def compiled_kernel(name):\n"
                 "    \"\"\"The compiled kernel `name` (compiled on first use, then cached).\"\"\"\n"
                 "    if name not in _COMPILED:\n"
                 "        _COMPILED[name] = tilelang.compile(PRIM_FUNCS[name], out_idx=None, target=TARGET)\n"
                 "    return _COMPILED[name]\n\n\n");
  emit_printf(e,
              "def %swarm_part(part, parts):\n"
              "    \"\"\"warm()'s worker: compile kernels part, part + parts, ... for this GPU.\"\"\"\n"
              "    for name in list(PRIM_FUNCS)[part::parts]:\n"
              "        print(f\"compiling {name}\", flush=True)\n"
              "        compiled_kernel(name)\n"
              "    return 0\n\n\n",
              e->pre);
  emit_printf(e,
              "def %sdivergent_barriers(src):\n"
              "    \"\"\"Lines of lowered CUDA with a __syncthreads() inside an `if` on threadIdx: a\n"
              "    barrier that only some threads of the block reach never completes.\"\"\"\n"
              "    import re\n"
              "    stack, lines = [], []\n"
              "    for no, line in enumerate(src.splitlines(), 1):\n"
              "        s = line.strip()\n"
              "        cond = \"threadIdx\" in s and re.match(r\"(\\}\\s*)?(else\\s+)?if\\b\", s) is not None\n"
              "        for ch in s:\n"
              "            if ch == \"{\":\n"
              "                stack.append(cond)\n"
              "                cond = False\n"
              "            elif ch == \"}\" and stack:\n"
              "                stack.pop()\n"
              "        if \"__syncthreads()\" in s and any(stack):\n"
              "            lines.append(no)\n"
              "    return lines\n\n\n",
              e->pre);
  emit_printf(e,
              "def compile_only(arch=\"sm_90a\"):\n"
              "    \"\"\"Lower every kernel for arch (sm_90a, sm_80, ...) without a GPU and, with nvcc\n"
              "    found (CUDA_HOME, PATH or /usr/local/cuda), build its CUDA source into a\n"
              "    cubin; one line per kernel.  Returns 0 if every kernel built.\"\"\"\n"
              "    import os\n"
              "    import shutil\n"
              "    import subprocess\n"
              "    import tempfile\n"
              "    from tilelang import tvm\n"
              "    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH\n"
              "\n"
              "    target = {\"kind\": \"cuda\", \"arch\": arch}\n"
              "    home = os.environ.get(\"CUDA_HOME\") or os.environ.get(\"CUDA_PATH\") or \"/usr/local/cuda\"\n"
              "    nvcc = shutil.which(\"nvcc\") or next((p for p in [os.path.join(home, \"bin\", \"nvcc\")] if os.path.exists(p)), None)\n"
              "    cc = arch.removeprefix(\"sm_\")\n"
              "    failed = 0\n"
              "    for name, fn in PRIM_FUNCS.items():\n"
              "        try:\n"
              "            with tvm.transform.PassContext(opt_level=3), tvm.target.Target(target):\n"
              "                src = tilelang.lower(fn, target=target).kernel_source\n"
              "            bad = %sdivergent_barriers(src)\n"
              "            if bad:\n"
              "                raise RuntimeError(f\"a __syncthreads() inside a branch on threadIdx (CUDA line {bad[0]}): \"\n"
              "                                   \"threads that skip it never meet the others there; the kernel would hang\")\n"
              "            what = f\"{len(src)} chars of CUDA\"\n"
              "            if nvcc:\n"
              "                with tempfile.TemporaryDirectory() as d:\n"
              "                    cu, cubin = os.path.join(d, \"k.cu\"), os.path.join(d, \"k.cubin\")\n"
              "                    with open(cu, \"w\") as f:\n"
              "                        f.write(src)\n"
              "                    r = subprocess.run([nvcc, \"--cubin\", \"-O3\", \"-std=c++20\", \"-gencode\",\n"
              "                                        f\"arch=compute_{cc},code=sm_{cc}\", \"-diag-suppress\", \"1444\",\n"
              "                                        \"-I\" + TILELANG_TEMPLATE_PATH, \"-I\" + CUTLASS_INCLUDE_DIR, \"-o\", cubin, cu],\n"
              "                                       capture_output=True, text=True)\n"
              "                    if r.returncode != 0:\n"
              "                        raise RuntimeError(\"nvcc: \" + (r.stderr.strip().splitlines() or [\"?\"])[-1])\n"
              "                    what += f\", a cubin of {os.path.getsize(cubin)} bytes\"\n"
              "            else:\n"
              "                what += \" (no nvcc found: lowered, not built)\"\n"
              "            print(f\"built {name} for {arch}: {what}\")\n"
              "        except Exception as e:  # noqa: BLE001\n"
              "            failed += 1\n"
              "            print(f\"FAILED {name} for {arch}: {type(e).__name__}: {(str(e).strip().splitlines() or ['?'])[-1]}\")\n"
              "    return 1 if failed else 0\n\n\n",
              e->pre);
}

const EmitTarget emit_tilelang = {
    .name = "tilelang",
    .op_template = tl_template,
    .exp_diff = "T.exp2(%0 * $2 - %1 * $2)",
    .exp_scaled = "T.exp2(%0 * $1)",
    .idiv_pos = "T.floordiv(%0, %1)",
    .idx_min = "T.min",
    .idx_max = "T.max",
    .idx_and = "and",
    .constant = tl_constant,
    .load = tl_load,
    .tile = tl_tile,
    .imports = tl_imports,
    .kernel = tl_kernel,
    .launch = tl_launch,
    .extras = tl_extras,
    .f32_gemm_tolerance = 5e-3,
    .f32_gemm_note = "T.gemm on float32 runs in TF32 on the tensor cores",
};
