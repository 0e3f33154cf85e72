/*
 * verify.c: `tilesmith verify`, the tile program against the graph.
 *
 * Judging a kernel.  After the tile interpreter has run the whole program,
 * every global a kernel stores (checked after the last kernel that stores
 * it) is compared with the graph interpreter's value of the global's node,
 * evaluated with interp_bound from the tile program's own values of every
 * other global.  So each kernel is judged on exactly the inputs it read: an
 * error is attributed to the first kernel that makes one, and rounding in
 * the storage type upstream (which an ill-conditioned op such as softmax of
 * large logits amplifies without bound) is never blamed on a later kernel.
 * A mismatch at a kernel one of whose nodes reaches, in float64 from the
 * kernel's own inputs, beyond the storage type's range is a skip, not a
 * failure: the adversarial inputs are out of range for that type.
 * A fault of the tile interpreter (an out-of-bounds access) is reported at
 * its kernel and statement unless an earlier kernel already mismatched.
 * With normal inputs the final output is also compared with the all-float64
 * result (tolerance x5); a difference there is a note, not a failure: when
 * every kernel is right on its own inputs the program is right, and an
 * ill-conditioned one (softmax of large logits from unnormalized random
 * weights) drifts however it is lowered.
 *
 * Tolerances.  |got - want| <= rtol * (|want| + scale) + C * bound + the
 * smallest subnormal, where scale is the larger of the row's largest |want|
 * (row: the last axis) and the RMS of the whole tensor: the relative part
 * covers rounding the result to the storage type, the scaled part the error
 * of a sum whose terms cancel (a gemm over tiles rounded to the storage
 * type), whose size follows the terms, not the result.  rtol: bf16 2e-2 (5
 * units in the last place of its 8-bit significand), f16 4e-3 (4 ulp of 11
 * bits), f32 1e-4 (set when it also stood for float32 evaluation against
 * float64, which the bound now covers).  bound is interp_bound's first-order
 * bound on the error of the kernel's own evaluation of the node from its
 * inputs (kernel_roundoffs says how the kernel rounds: every node it
 * computes but the stored one in float32, or in a narrower tile type; sums
 * and products accumulated in float32), so a fused kernel that keeps
 * attention scores of 1e8 in float32 registers is allowed what float32
 * makes of them, and a naive one subtracting huge values (cross-entropy of
 * 1e8 logits) what float32 makes of that.  C = 2: the bound is rigorous to
 * first order for correctly rounded operations (the tile interpreter's:
 * each op rounds once, by at most u relative) and linear in the unit
 * roundoffs, so twice it bounds operations that err by up to one ulp (2u),
 * as faithfully rounded GPU math functions do; the dropped second-order
 * terms are smaller still (CUDA documents up to 2 ulp for expf and rsqrtf:
 * the worst-case n*u of every sum leaves room for that in practice, but it
 * is not claimed).  Where C * bound exceeds both |want| and the storage
 * part, the check is vacuous (any value near 0 passes): those elements are
 * counted and reported in the summary.  An infinite bound (the evaluation
 * cannot be bounded: a divisor or log whose operand interval reaches 0)
 * accepts any value, even a non-finite one.  Integer and boolean tensors
 * must match exactly, unless the bound says a comparison may flip.  Where
 * the reference leaves the storage type's range (it overflows it, or is
 * infinite or NaN because the kernel's inputs already overflowed), the tile
 * value must leave it too, but which infinity or NaN is not compared:
 * float32 gets there by other roads than float64 (0 * inf after an
 * underflow).  A finite reference needs a finite value (unless the bound is
 * infinite), except that a value within 2*rtol of the type's largest finite
 * one may round to infinity.
 *
 * Instances.  The entry's Nat parameters (elab_entry_nats; --size values
 * replace them) are shrunk by families of monotone maps that keep the
 * divisibility of sizes by smaller sizes (D by H, H by Hkv), each family
 * trying smaller tops until the tile program's work is under a budget:
 *   as given  the sizes themselves, when they are already small enough;
 *   no tails  1, 2 stay; <= 8 -> 4; <= 32 -> 8; larger -> 64; then
 *             (4, 8, 32), (2, 4, 16), (2, 2, 2) while over the budget;
 *   tails     1 stays; <= 8 -> 3; <= 32 -> 9; larger -> 45; then
 *             (3, 9, 27), (3, 3, 9), (3, 3, 3);
 *   ones      every size 1;
 *   scaled    every size divided (rounding up) by the power of two that
 *             brings the largest to 64 (32, 16, 8): the sizes' ratios
 *             stay (a window W = N/4 stays a quarter of N);
 *   wide      the same to 512 (256, 128): an axis the plan tiles by 128
 *             spans several tiles, so loop bounds, skipped tiles and the
 *             carried state between tiles are exercised (the other
 *             families fit most streamed axes in one tile).
 * An instance that does not elaborate (a constraint of the program rejects
 * it) or has a tensor with no elements (opt refuses those sizes) is
 * skipped silently, as is one equal to an earlier instance.  Each
 * instance runs `trials` trials of normal inputs and one of each adversarial
 * kind.  Normal inputs are drawn as everywhere (ir/inputs.c: weights feeding
 * a matmul normal(0, 1/fan_in)); the adversarial kinds start from normal(0, 1)
 * for every real input, weights included, since stressing the numerics is
 * their point.
 */
#include "verify.h"

#include "../grad/grad.h"
#include "../search/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NATS 32
#define WORK_BUDGET 3.0e7

const char *verify_input_name(VerifyInput k) {
  switch (k) {
  case VIN_NORMAL: return "normal";
  case VIN_LARGE: return "large";
  case VIN_TIES: return "ties";
  case VIN_MASKED_ROWS: return "masked-rows";
  case VIN_EXTREME: return "extreme";
  case VIN_RAMP: return "ramp";
  case VIN_WIDE_INTEGERS: return "wide-integers";
  }
  return "?";
}

double verify_rtol(DType dt) {
  switch (dt) {
  case DT_BF16: return 2e-2;
  case DT_F16: return 4e-3;
  case DT_F32: return 1e-4;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: return 0;
  }
  return 0;
}

static double dtype_max(DType dt) {
  switch (dt) {
  case DT_F16: return 65504.0;
  case DT_BF16: return 3.3895313892515355e38;
  case DT_F32: return 3.4028234663852886e38;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: return INFINITY;
  }
  return INFINITY;
}

static double dtype_tiny(DType dt) {
  switch (dt) {
  case DT_F16: return 5.960464477539063e-08;
  case DT_BF16: return 9.183549615799121e-41;
  case DT_F32: return 1.401298464324817e-45;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: return 0;
  }
  return 0;
}

/* ---- inputs ---- */

void verify_inputs(Graph *g, DType dt, VerifyInput kind, uint64_t seed, Tensor **inputs) {
  interp_random_inputs(g, inputs, seed, kind != VIN_NORMAL); /* adversarial kinds start from normal(0, 1) */
  Rng rng;
  rng_seed(&rng, seed * 0x9e3779b97f4a7c15ULL + (uint64_t)kind);
  bool f16 = dt == DT_F16;
  double large = f16 ? 15 : 1e3, big = f16 ? 200 : 1e6, tiny = f16 ? 1e-6 : 1e-20, neg = -1e4;
  for (int i = 0; i < g->ninputs; i++) {
    const Node *in = g->inputs[i];
    Tensor *t = inputs[i];
    if (in->kind != EK_REAL || in->role == ROLE_INDEX) continue;
    int64_t n = shape_numel(&t->shape);
    int64_t len = t->shape.rank ? t->shape.d[t->shape.rank - 1].n : 1;
    for (int64_t e = 0; e < n; e++) {
      double *x = &t->data[e];
      switch (kind) {
      case VIN_NORMAL: break;
      case VIN_LARGE: *x *= large; break;
      case VIN_TIES: *x = (double)(rng_below(&rng, 3) - 1); break;
      case VIN_MASKED_ROWS:
        if (len > 0 && e % len == 0) {
          int64_t keep = rng_below(&rng, len);
          for (int64_t j = 0; j < len; j++)
            if (j != keep) t->data[e + j] = neg;
        }
        break;
      case VIN_EXTREME: {
        int64_t r = rng_below(&rng, 4);
        if (r == 0) *x = (*x < 0 ? -big : big) * (1 + rng_uniform(&rng));
        else if (r == 1) *x *= tiny;
        break;
      }
      case VIN_RAMP: *x *= 1 + 3 * (double)e / (double)(n > 1 ? n - 1 : 1); break;
      case VIN_WIDE_INTEGERS: *x = (double)(rng_below(&rng, 33) - 16); break;
      }
    }
    for (int64_t e = 0; e < n; e++) t->data[e] = dtype_round(dt, t->data[e]);
  }
}

/* ---- comparing tensors ---- */

typedef struct Cmp {
  bool ok;
  int64_t at;          /* first mismatch (flat) */
  double got, want, tol, bound;
  double worst;        /* largest err/tol */
  int64_t elements;    /* real elements compared with a finite reference (or an unbounded one out of range) ... */
  int64_t unverifiable; /* ... and those where INTERP_BOUND_C * bound > |want| and > rtol * (|want| + scale) */
} Cmp;

static bool near_max(double v, double mx, double rtol) { return fabs(v) >= mx * (1 - 2 * rtol); }

/* got against want: |got - want| <= rtol * (|want| + scale) + INTERP_BOUND_C *
   bound (bound NULL: none) + the smallest subnormal. */
static void compare(const Tensor *got, const Tensor *want, const Tensor *bound, DType dt, double rtol, Cmp *c) {
  memset(c, 0, sizeof *c);
  c->ok = true;
  int64_t n = shape_numel(&want->shape);
  int64_t len = want->shape.rank ? want->shape.d[want->shape.rank - 1].n : 1;
  if (len < 1) len = 1;
  double ss = 0;
  int64_t cnt = 0;
  for (int64_t e = 0; e < n; e++)
    if (isfinite(want->data[e])) ss += want->data[e] * want->data[e], cnt++;
  double rms = cnt ? sqrt(ss / (double)cnt) : 0, mx = dtype_max(dt), tiny = dtype_tiny(dt);
  for (int64_t row = 0; row < n; row += len) {
    double rowmax = 0;
    for (int64_t e = row; e < row + len && e < n; e++)
      if (isfinite(want->data[e]) && fabs(want->data[e]) > rowmax) rowmax = fabs(want->data[e]);
    double scale = rowmax > rms ? rowmax : rms;
    for (int64_t e = row; e < row + len && e < n; e++) {
      double g = got->data[e], w = want->data[e], bnd = bound ? INTERP_BOUND_C * bound->data[e] : 0;
      double tol = rtol * (fabs(w) + scale) + bnd + tiny, ratio;
      bool ok;
      double wr = dtype_round(dt, w);
      /* integers and booleans exactly, unless the bound says they may flip */
      if (rtol == 0) ok = g == w || (isnan(g) && isnan(w)) || fabs(g - w) <= bnd, ratio = ok ? 0 : INFINITY;
      else if (!isfinite(wr) && isinf(bnd)) {
        /* out of range, and the evaluation could not be bounded: a kernel
           that rounds differently may stay in range (exp of a difference
           of two huge values, each rounded) */
        ok = true;
        ratio = 0;
        c->elements++, c->unverifiable++; /* counted among the checked, so at most all of them */
      } else if (!isfinite(wr)) {
        /* out of the type's range: got must be out of it too (or at its
           edge); which infinity or NaN is not compared, since float32
           reaches them by other roads (0 * inf after an underflow) */
        ok = !isfinite(g) || near_max(g, mx, rtol);
        ratio = ok ? 0 : INFINITY;
      } else {
        c->elements++;
        /* vacuous by the bound: it admits more than |want| and more than
           the storage part already did (a cancelling sum's ~0 result is
           covered by rtol * scale, not by the bound) */
        c->unverifiable += bnd > fabs(w) && bnd > rtol * (fabs(w) + scale);
        if (isinf(bnd)) {
          /* the evaluation could not be bounded: any value, even an
             infinity or NaN, is what a correct kernel might compute */
          ok = true;
          ratio = 0;
        } else if (!isfinite(g)) {
          ok = isinf(g) && near_max(w, mx, rtol) && (g > 0) == (w > 0);
          ratio = ok ? 0 : INFINITY;
        } else {
          ratio = fabs(g - w) / tol;
          ok = ratio <= 1;
        }
      }
      if (ratio > c->worst || (!ok && c->ok)) c->worst = ratio > c->worst ? ratio : c->worst;
      if (!ok && c->ok) {
        c->ok = false;
        c->at = e, c->got = g, c->want = w, c->tol = tol, c->bound = bnd;
      }
    }
  }
}

static void index_of(const Shape *s, int64_t flat, char *buf, size_t n) {
  int64_t ix[TS_MAX_RANK];
  for (int d = s->rank - 1; d >= 0; d--) {
    int64_t m = s->d[d].n > 0 ? s->d[d].n : 1;
    ix[d] = flat % m;
    flat /= m;
  }
  size_t used = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < s->rank && used < n; d++)
    used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "", (long long)ix[d]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

/* ---- one trial ---- */

typedef struct StoreFind { const TBuf *b; const Stmt *hit; } StoreFind;

static bool find_store(const Stmt *s, int depth, void *ud) {
  (void)depth;
  StoreFind *f = ud;
  if ((s->kind == ST_STORE || s->kind == ST_ATOMIC_ADD) && s->global == f->b) f->hit = s;
  return !f->hit;
}

/* The first store statement of k into global b, or NULL. */
static const Stmt *store_of(const Kernel *k, const TBuf *b) {
  StoreFind f = {b, NULL};
  tile_walk(&k->body, find_store, &f);
  return f.hit;
}

/* ---- how a kernel rounds: the error bound's unit roundoffs ---- */

/* Unit roundoff of a type: 2^-p for a p-bit significand. */
static double unit_roundoff(DType dt) {
  switch (dt) {
  case DT_F32: return 0x1p-24;
  case DT_F16: return 0x1p-11;
  case DT_BF16: return 0x1p-8;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: return 0;
  }
  return 0;
}

static bool acc_roundoff(const Stmt *s, int depth, void *ud) {
  (void)depth;
  double *u = ud;
  if ((s->kind == ST_REDUCE || s->kind == ST_GEMM) && s->dst && unit_roundoff(s->dst->dtype) > *u)
    *u = unit_roundoff(s->dst->dtype);
  return true;
}

/* How kernel K rounds while it computes the node n it stores, for
   interp_bound: every other real node K computes (K->covers) is held in
   float32, or in a narrower type where a tile buffer of K holds it (a gemm
   operand tile in the storage type); n itself gets 0, its rounding to its
   global's type being the rtol part of the tolerance.  Sums and products
   accumulate with the roundoff of K's accumulators (the widest of the
   reduce and gemm destinations' roundoffs: float32 today).  A node held in
   two types (P in float32 for its row sum, in the storage type for a gemm)
   is charged the narrower for all its uses: conservative. */
/* The roundings to a tile's storage type in K (a gemm operand made in the
   kernel: attention's probabilities cast for the tensor cores), added to u.
   Also where K does not compute the tile's node as such: a stream law
   that moves a division after the loop leaves the tile holding the
   dividend, labelled with the quotient, and rounding either is the same
   relative error (attention's output reduced over the queries into a
   float32 temporary failed verify without it: held-out attn_mean_pool).
   An input's or a given value's rounding is no rounding (they are exact). */
static void add_tile_roundings(const Kernel *K, const Node *n, double *u) {
  for (int i = 0; i < K->bufs.len; i++) {
    const TBuf *b = K->bufs.data[i];
    if (b->node && b->node != n && b->node->kind == EK_REAL &&
        unit_roundoff(b->dtype) > u[b->node->id])
      u[b->node->id] = unit_roundoff(b->dtype);
  }
}

/* How kernel K rounds the nodes it computes: every one but n in float32,
   or in its tile's narrower type, and the constants they read in float32;
   sums and products accumulated in float32. */
static void kernel_roundoffs(const Kernel *K, const Node *n, int nn, double *u, double *uacc) {
  memset(u, 0, sizeof *u * (size_t)nn);
  memset(uacc, 0, sizeof *uacc * (size_t)nn);
  double acc = 0;
  tile_walk(&K->body, acc_roundoff, &acc);
  for (int i = 0; i < K->covers.len; i++) {
    const Node *c = K->covers.data[i];
    if (c->kind == EK_REAL && c != n) u[c->id] = unit_roundoff(DT_F32);
    if (op_info[c->op].cls == OPC_REDUCE || op_info[c->op].cls == OPC_MATMUL) uacc[c->id] = acc;
    /* the real constants it reads are float32 literals in the kernel (a
       divisor as its reciprocal, sx_op: 1/sqrt(8) rounded, then the
       product rounded, two roundings where the graph has one quotient) */
    for (int j = 0; j < c->nin; j++)
      if (c->in[j]->op == OP_CONST && c->in[j]->kind == EK_REAL) u[c->in[j]->id] = unit_roundoff(DT_F32);
  }
  add_tile_roundings(K, n, u);
}

typedef struct Trial {
  int ng, nn;
  Tensor **glob;      /* the tile program's globals */
  Tensor **given;     /* per node: borrowed from glob */
  Tensor *out, *ref;
  Tensor *bound;      /* the error bound of ref */
  double *u, *uacc;   /* per node: how the kernel checked rounds (interp_bound) */
  bool *keep;         /* out_of_range: the kernel's nodes ... */
  Tensor **values;    /* ... and their float64 values */
} Trial;

static void drop_values(Trial *t) {
  for (int i = 0; t->values && i < t->nn; i++) tensor_free(t->values[i]);
  free(t->values);
  free(t->keep);
  t->values = NULL;
  t->keep = NULL;
}

static void trial_free(Trial *t) {
  if (!t) return;
  drop_values(t);
  for (int i = 0; t->glob && i < t->ng; i++) tensor_free(t->glob[i]);
  free(t->glob);
  free(t->given);
  tensor_free(t->out);
  tensor_free(t->ref);
  tensor_free(t->bound);
  free(t->u);
  free(t->uacc);
  free(t);
}

static void fmt_num(char *buf, size_t n, double v) { snprintf(buf, n, "%.6g", v); }

/* Which scratch global (split partials, not a graph value) does kernel k read? */
typedef struct ScratchRead { const TBuf *found; } ScratchRead;
static void scratch_leaf(const SExpr *e, void *ud) {
  ScratchRead *r = ud;
  if (e->kind == SX_LOAD && e->buf->role == GB_SCRATCH && !r->found) r->found = e->buf;
}
static void scratch_expr(const SExpr *e, void *ud) { sexpr_walk(e, scratch_leaf, ud); }
static bool scratch_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  stmt_exprs(s, scratch_expr, ud);
  return true;
}

/* A kernel that combines partials is judged on them though they are no
   graph value: a fault found there may lie in the kernel that wrote them. */
/* The (first) scratch global kernel k reads, or NULL. */
static const TBuf *scratch_read(const Kernel *k) {
  ScratchRead r = {NULL};
  tile_walk(&k->body, scratch_stmt, &r);
  return r.found;
}

static void scratch_note(const TileProgram *tp, const Kernel *k, char *buf, size_t n) {
  const TBuf *sb = scratch_read(k);
  buf[0] = 0;
  if (!sb) return;
  for (int i = 0; i < tp->kernels.len; i++)
    if (store_of(tp->kernels.data[i], sb)) {
      snprintf(buf, n, "; it combines the partials %s that %s wrote: the fault may lie there", sb->name,
               tp->kernels.data[i]->name);
      return;
    }
}

static bool fail_at(VerifyResult *res, const Kernel *k, const Stmt *s, const TBuf *b, const Cmp *c,
                    const char *note) {
  char where[160], ix[160], g[40], w[40], tol[40], bnd[40];
  tile_stmt_where(k, s, where, sizeof where);
  index_of(&b->shape, c->at, ix, sizeof ix);
  fmt_num(g, sizeof g, c->got);
  fmt_num(w, sizeof w, c->want);
  fmt_num(tol, sizeof tol, c->tol);
  fmt_num(bnd, sizeof bnd, c->bound);
  res->pass = false;
  res->kernel = k;
  res->stmt = s;
  res->worst = c->worst;
  snprintf(res->msg, sizeof res->msg, "%s stores %s%s = %s, want %s (tolerance %s, of which error bound %s; %s)%s",
           where, b->name, ix, g, w, tol, bnd, dtype_name(b->dtype), note);
  return false;
}

/* When kernel K mismatches: does one of the nodes it computes reach, in
   float64 from K's own inputs, beyond the storage type's range?  Then the
   inputs are out of range for the type (a product of two large matmul
   outputs in float16) and the mismatch says nothing about the lowering.
   Returns that node (and its value in *v), or NULL. */
static const Node *out_of_range(const TileProgram *tp, const Kernel *K, const Node *n, Tensor **inputs, Trial *t,
                                double *v) {
  double mx = dtype_max(tp->dtype);
  if (!isfinite(mx)) return NULL;
  t->keep = calloc((size_t)(t->nn ? t->nn : 1), sizeof *t->keep);
  t->values = calloc((size_t)(t->nn ? t->nn : 1), sizeof *t->values);
  if (!t->keep || !t->values) {
    drop_values(t);
    return NULL;
  }
  for (int i = 0; i < K->covers.len; i++)
    if (K->covers.data[i]->kind == EK_REAL) t->keep[K->covers.data[i]->id] = true;
  Tensor *saved = t->given[n->id];
  t->given[n->id] = NULL;
  t->ref = interp_run_ex(tp->g, inputs, t->given, n, t->keep, t->values);
  t->given[n->id] = saved;
  const Node *found = NULL;
  for (int i = 0; i < t->nn && !found; i++) {
    if (!t->values[i]) continue;
    int64_t m = shape_numel(&t->values[i]->shape);
    for (int64_t e = 0; e < m && !found; e++)
      if (isfinite(t->values[i]->data[e]) && fabs(t->values[i]->data[e]) > mx)
        found = tp->g->nodes[i], *v = t->values[i]->data[e];
  }
  drop_values(t);
  tensor_free(t->ref);
  t->ref = NULL;
  return found;
}

static bool trial_run(const TileProgram *tp, Tensor **inputs, bool e2e, VerifyResult *res, Trial *t) {
  Graph *g = tp->g;
  TileFault f;
  t->out = tile_run(tp, inputs, t->glob, &f);
  int nk = tp->kernels.len, stop = nk;
  if (f.hit)
    for (int k = 0; k < nk; k++)
      if (tp->kernels.data[k] == f.kernel) stop = k;
  for (int gi = 0; gi < t->ng; gi++) {
    const TBuf *b = tp->globals.data[gi];
    if (!b->node || !t->glob[gi] || (b->role == GB_OUTPUT && b->node->op == OP_INPUT)) continue;
    t->given[b->node->id] = t->glob[gi];
  }
  double worst = 0;
  int checked = 0;
  for (int k = 0; k < stop; k++) {
    const Kernel *K = tp->kernels.data[k];
    for (int gi = 0; gi < t->ng; gi++) {
      const TBuf *b = tp->globals.data[gi];
      const Stmt *s = store_of(K, b);
      if (!s || !b->node || !t->glob[gi]) continue;
      bool later = false;
      for (int k2 = k + 1; k2 < nk; k2++) later |= store_of(tp->kernels.data[k2], b) != NULL;
      if (later) continue;
      const Node *n = b->node;
      Tensor *saved = t->given[n->id];
      t->given[n->id] = NULL;
      kernel_roundoffs(K, n, t->nn, t->u, t->uacc);
      /* a combine is judged on partials no graph value holds: the kernels
         that wrote them rounded to the storage type too (a split's P); not
         their float32 accumulation, whose worst-case bound over a long
         split sum would admit a dropped partial */
      const TBuf *sb = scratch_read(K);
      for (int k2 = 0; sb && k2 < k; k2++)
        if (store_of(tp->kernels.data[k2], sb)) add_tile_roundings(tp->kernels.data[k2], n, t->u);
      t->ref = interp_bound(g, inputs, t->given, n, t->u, t->uacc, &t->bound);
      t->given[n->id] = saved;
      Cmp c;
      compare(t->glob[gi], t->ref, t->bound, b->dtype, verify_rtol(b->dtype), &c);
      tensor_free(t->ref);
      tensor_free(t->bound);
      t->ref = t->bound = NULL;
      checked++;
      if (c.worst > worst) worst = c.worst;
      res->unverifiable += c.unverifiable;
      res->elements += c.elements;
      if (!c.ok) {
        double v;
        const Node *big = out_of_range(tp, K, n, inputs, t, &v);
        char note[200];
        scratch_note(tp, K, note, sizeof note);
        fail_at(res, K, s, b, &c, note);
        if (!big) return false;
        char msg[sizeof res->msg];
        snprintf(msg, sizeof msg, "skipped: %%%d (%s) of %s reaches %.6g in float64, beyond %s's range: the inputs are "
                 "out of range for this storage type (%.400s)", big->id, op_info[big->op].name, K->name, v,
                 dtype_name(tp->dtype), res->msg);
        memcpy(res->msg, msg, sizeof msg);
        res->pass = res->skipped = true;
        return true;
      }
    }
  }
  if (f.hit) {
    char where[160];
    res->pass = false;
    res->kernel = f.kernel;
    res->stmt = f.stmt;
    if (f.kernel && f.stmt) tile_stmt_where(f.kernel, f.stmt, where, sizeof where);
    else snprintf(where, sizeof where, "%s", f.kernel ? f.kernel->name : "the program");
    snprintf(res->msg, sizeof res->msg, "fault in %s: %s", where, f.msg);
    return false;
  }
  /* an output no kernel writes holds whatever the allocator left there */
  for (int gi = 0; gi < t->ng; gi++) {
    const TBuf *b = tp->globals.data[gi];
    if (b->role != GB_OUTPUT) continue;
    bool written = false;
    for (int k = 0; k < nk && !written; k++) written = store_of(tp->kernels.data[k], b) != NULL;
    if (!written) {
      res->pass = false;
      res->kernel = NULL;
      snprintf(res->msg, sizeof res->msg, "no kernel writes the output %s", b->name);
      return false;
    }
  }
  char note[600] = "";
  if (e2e && t->out && tp->output) {
    /* informational: a kernel that is right on its own inputs is right; an
       ill-conditioned program (softmax of large logits) can still drift */
    t->ref = interp_run(g, inputs);
    Cmp c;
    DType dt = tp->output->dtype;
    compare(t->out, t->ref, NULL, dt, 5 * verify_rtol(dt), &c);
    if (!c.ok) {
      char ix[160], gs[40], ws[40];
      index_of(&tp->output->shape, c.at, ix, sizeof ix);
      fmt_num(gs, sizeof gs, c.got);
      fmt_num(ws, sizeof ws, c.want);
      snprintf(note, sizeof note, "; note: end to end, %s%s = %s against %s in float64 (beyond 5x tolerance): "
               "rounding in %s accumulates across kernels", tp->output->name, ix, gs, ws, dtype_name(dt));
    }
  }
  res->pass = true;
  res->worst = worst;
  snprintf(res->msg, sizeof res->msg,
           "%d kernel%s, %d tensor%s checked, worst error %.2f of tolerance, error bound over |value| at %lld of %lld "
           "elements%s", nk, nk == 1 ? "" : "s", checked, checked == 1 ? "" : "s", worst, (long long)res->unverifiable,
           (long long)res->elements, note);
  return true;
}

bool verify_trial(const TileProgram *tp, Tensor **inputs, bool end_to_end, VerifyResult *res) {
  memset(res, 0, sizeof *res);
  Graph *g = tp->g;
  Ctx *c = g->ctx;
  Trial *t = calloc(1, sizeof *t);
  if (t) {
    t->ng = tp->globals.len;
    t->nn = g->nnodes;
    t->glob = calloc((size_t)(t->ng ? t->ng : 1), sizeof *t->glob);
    t->given = calloc((size_t)(t->nn ? t->nn : 1), sizeof *t->given);
    t->u = calloc((size_t)(t->nn ? t->nn : 1), sizeof *t->u);
    t->uacc = calloc((size_t)(t->nn ? t->nn : 1), sizeof *t->uacc);
  }
  if (!t || !t->glob || !t->given || !t->u || !t->uacc) {
    trial_free(t);
    snprintf(res->msg, sizeof res->msg, "out of memory");
    return false;
  }
  jmp_buf here;
  jmp_buf *prev = c->unwind;
  if (prev) {
    if (setjmp(here)) {
      c->unwind = prev;
      trial_free(t);
      longjmp(*prev, 1);
    }
    c->unwind = &here;
  }
  bool ok = trial_run(tp, inputs, end_to_end, res, t);
  c->unwind = prev;
  trial_free(t);
  return ok;
}

/* ---- instances ---- */

/* The size a family maps v to at a level (0 largest); every map is monotone
   and its values form a chain of divisors, so D/H and H/Hkv stay whole. */
static int64_t shrink(int family, int level, int64_t v, int64_t vmax) {
  static const int64_t aligned[4][3] = {{4, 8, 64}, {4, 8, 32}, {2, 4, 16}, {2, 2, 2}};
  static const int64_t tails[4][3] = {{3, 9, 45}, {3, 9, 27}, {3, 3, 9}, {3, 3, 3}};
  int c = v <= 8 ? 0 : v <= 32 ? 1 : 2;
  switch (family) {
  case 1: return v <= 2 ? v : aligned[level][c]; /* no tails */
  case 2: return v <= 1 ? v : tails[level][c];   /* tails */
  case 3: return 1;                              /* ones */
  case 4:                                        /* scaled: ratios kept */
  case 5: {                                      /* wide: ratios kept, several tiles */
    int64_t div = 1;
    while (vmax / div > ((family == 4 ? 64 : 512) >> level)) div *= 2;
    return (v + div - 1) / div;
  }
  }
  return v; /* as given */
}

typedef struct Work { const Kernel *k; double w; } Work;

static double list_work(const Kernel *k, const StmtList *l);

static double stmt_work(const Kernel *k, const Stmt *s) {
  double dst = 1;
  if (s->dst)
    for (int d = 0; d < s->dst->shape.rank; d++) dst *= (double)s->dst->shape.d[d].n;
  switch (s->kind) {
  case ST_FILL: return dst;
  case ST_MAP: return 8 * dst;
  case ST_GEMM: {
    const TBuf *a = s->a;
    return dst * (a && a->shape.rank == 2 ? (double)a->shape.d[s->trans_a ? 0 : 1].n : 1);
  }
  case ST_REDUCE: return s->a && s->a->shape.rank == 2 ? (double)(s->a->shape.d[0].n * s->a->shape.d[1].n) : 1;
  case ST_STORE:
  case ST_ATOMIC_ADD: return 8 * (double)s->ext[0] * (double)s->ext[1];
  case ST_LOOP: return (double)tile_loop_trips_max(k, s) * (1 + list_work(k, &s->body));
  case ST_IF: {
    double a = list_work(k, &s->body), b = list_work(k, &s->orelse);
    return a > b ? a : b;
  }
  }
  return 0;
}

static double list_work(const Kernel *k, const StmtList *l) {
  double w = 0;
  for (int i = 0; i < l->len; i++) w += stmt_work(k, l->data[i]);
  return w;
}

/* A rough count of the tile interpreter's element operations for tp. */
static double tile_work(const TileProgram *tp) {
  double w = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *K = tp->kernels.data[k];
    double blocks = (double)K->grid[0] * (double)K->grid[1] * (double)K->grid[2];
    w += blocks * list_work(K, &K->body);
  }
  return w;
}

/* The entry's graph at sizes s (its backward pass with --grad); unwinds
   through c if it does not elaborate. */
static Graph *instance_graph(Ctx *c, const Program *prog, const char *entry, SizeArg *s, int n, const VerifyOpts *o) {
  Graph *g = elab_entry(c, prog, entry, (Pos){0}, s, n);
  if (o->grad) grad_backward_entry(g, NULL, NULL);
  return g;
}

/* Elaborate and lower one instance in the context's current arena; NULL if
   it does not elaborate (quietly) or breaks a tile invariant (*broken set,
   the violation printed to err). */
static TileProgram *build(Ctx *c, const Program *prog, const char *entry, SizeArg *s, int n, DType dt,
                          const VerifyOpts *o, FILE *err, bool *broken, char *skip, size_t skiplen, Graph **orig) {
  *broken = false;
  *orig = NULL;
  skip[0] = 0;
  jmp_buf here;
  jmp_buf *prev = c->unwind;
  FILE *save = c->err;
  c->err = NULL;
  if (setjmp(here)) {
    c->unwind = prev;
    c->err = save;
    return NULL;
  }
  c->unwind = &here;
  Graph *g = instance_graph(c, prog, entry, s, n, o);
  c->unwind = prev;
  c->err = save;
  /* a tensor with no elements (a slice to N / 2 at N = 1): opt refuses
     such sizes (the GPU kernels need every tensor nonempty), so it is not
     an instance of what opt emits */
  for (int i = 0; i < g->nnodes; i++)
    if (shape_numel(&g->nodes[i]->shape) == 0) return NULL;
  TileProgram *tp;
  if (o->plan) {
    /* the program opt emits: the graph rewritten as opt rewrites it, the
       plan carried over to these sizes */
    *orig = g;
    Graph *rw = search_rewrite(g, o->bind, o->nbind, NULL);
    Plan *q = plan_transfer(o->plan, rw, skip, skiplen);
    if (!q) {
      /* a rule that fires only at these sizes (x/1 where a size is 1) can
         leave the rewritten graph without a counterpart of a planned node;
         the source graph may still have the plan's structure */
      char why[300];
      rw = search_rewrite_ex(g, o->bind, o->nbind, "identity", NULL);
      q = plan_transfer(o->plan, rw, why, sizeof why);
      if (!q) {
        q = plan_transfer(o->plan, g, why, sizeof why);
        if (!q) return NULL;
        *orig = NULL; /* nothing rewritten to check */
      }
      skip[0] = 0;
    }
    tp = tile_lower_plan(q);
    if (!tp) {
      /* the plan's tiles clamped to these sizes lower otherwise (a known
         gap of the lowering, not a wrong kernel): not this instance */
      for (int i = 0; i < q->kernels.len; i++)
        if (q->kernels.data[i]->why[0]) {
          snprintf(skip, skiplen, "kernel %d does not lower at these sizes: %s", i, q->kernels.data[i]->why);
          break;
        }
      if (!skip[0]) snprintf(skip, skiplen, "the plan does not lower at these sizes");
      return NULL;
    }
  } else {
    tp = tile_lower(g, dt);
  }
  if (!tile_check(tp, err)) {
    *broken = true;
    return NULL;
  }
  return tp;
}

/* Does the entry's graph at sizes s have the plan's structure?  (-1 if it
   does not elaborate.) */
static int probe_matches(Ctx *c, const Program *prog, const char *entry, SizeArg *s, int n, const VerifyOpts *o) {
  const Plan *plan = o->plan;
  Arena *home = c->arena, *scratch = arena_new();
  c->arena = scratch;
  jmp_buf here;
  jmp_buf *prev = c->unwind;
  FILE *save = c->err;
  c->err = NULL;
  int nodes = -1;
  if (!setjmp(here)) {
    c->unwind = &here;
    Graph *g = instance_graph(c, prog, entry, s, n, o);
    nodes = plan_matches(plan, search_rewrite(g, o->bind, o->nbind, NULL));
    if (!nodes) nodes = plan_matches(plan, search_rewrite_ex(g, o->bind, o->nbind, "identity", NULL));
  }
  c->unwind = prev;
  c->err = save;
  c->arena = home;
  arena_free(scratch);
  return nodes;
}

typedef struct Tally {
  int pass, fail, skip, instances, nostruct;
  int noelab, nontrivial;         /* size sets that do not elaborate; instances with a size above 1 */
  int vacuous;                    /* passed trials whose every checked element's bound admits any value */
  int64_t elements, unverifiable; /* over every trial */
  Json *json;                     /* --format json: the records go here, not lines */
} Tally;

/* One check's outcome: a line ("ok   LABEL (dtype) INPUT: MSG"), or with
   --format json a record of the results array. */
static void record(Tally *tl, FILE *out, const char *status, const char *label, DType dt, const char *input,
                   const char *msg, const VerifyResult *res) {
  if (!tl->json) {
    if (input) fprintf(out, "%s %s (%s) %s: %s\n", status, label, dtype_name(dt), input, msg);
    else fprintf(out, "%s %s (%s): %s\n", status, label, dtype_name(dt), msg);
    return;
  }
  Json *j = tl->json;
  json_begin_obj(j);
  json_kstr(j, "status", !strcmp(status, "ok  ") ? "ok" : !strcmp(status, "FAIL") ? "fail" : "skip");
  json_kstr(j, "instance", label);
  json_kstr(j, "input", input);
  json_kstr(j, "message", msg);
  if (res) {
    json_kstr(j, "kernel", res->kernel ? res->kernel->name : NULL);
    json_knum(j, "worst", res->worst);
    json_kint(j, "elements", res->elements);
    json_kint(j, "unverifiable", res->unverifiable);
  }
  json_end_obj(j);
}

/* One trial with fresh inputs; the graph interpreter's errors are caught. */
static void one_trial(Ctx *c, const TileProgram *tp, DType dt, VerifyInput kind, uint64_t seed, VerifyResult *res) {
  Graph *g = tp->g;
  Tensor **volatile inputs = calloc((size_t)g->ninputs + 1, sizeof(Tensor *));
  memset(res, 0, sizeof *res);
  jmp_buf here;
  jmp_buf *prev = c->unwind;
  if (!inputs) {
    snprintf(res->msg, sizeof res->msg, "out of memory");
  } else if (setjmp(here)) {
    res->pass = false;
    snprintf(res->msg, sizeof res->msg, "the graph interpreter stopped with an error (above)");
  } else {
    c->unwind = &here;
    verify_inputs(g, dt, kind, seed, inputs);
    verify_trial(tp, inputs, kind == VIN_NORMAL, res);
  }
  c->unwind = prev;
  if (inputs)
    for (int i = 0; i < g->ninputs; i++) tensor_free(inputs[i]);
  free(inputs);
}

/* The rewritten graph against the graph it came from, in float64 on normal
   inputs: normwise relative difference within 1e-9 (rules are identities
   over the reals; float64 differs by reassociation only). */
static void check_rewrite(Ctx *c, Graph *orig, Graph *rw, const char *label, const VerifyOpts *o, FILE *out, Tally *tl) {
  Tensor **volatile in = calloc((size_t)orig->ninputs + 1, sizeof(Tensor *));
  Tensor *volatile a = NULL, *volatile b = NULL;
  jmp_buf here;
  jmp_buf *prev = c->unwind;
  char msg[300] = "out of memory";
  volatile bool ok = false;
  if (in && !setjmp(here)) {
    c->unwind = &here;
    verify_inputs(orig, DT_F32, VIN_NORMAL, o->seed * 1000 + 17, in);
    a = interp_run(orig, in);
    b = interp_run(rw, in);
    double num = 0, den = 0;
    int64_t n = shape_numel(&a->shape);
    volatile bool nan_ok = true;
    for (int64_t e = 0; e < n; e++) {
      double x = a->data[e], y = b->data[e];
      if (!isfinite(x) || !isfinite(y)) {
        nan_ok &= (isnan(x) && isnan(y)) || x == y;
        continue;
      }
      num += (x - y) * (x - y);
      den += x * x;
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    ok = nan_ok && rel <= 1e-9;
    snprintf(msg, sizeof msg, "rewritten graph vs its source in float64: relative difference %.2g%s", rel,
             nan_ok ? "" : ", non-finite values differ");
  } else if (in) {
    snprintf(msg, sizeof msg, "the graph interpreter stopped with an error (above)");
  }
  c->unwind = prev;
  tensor_free(a);
  tensor_free(b);
  for (int i = 0; in && i < orig->ninputs; i++) tensor_free(in[i]);
  free(in);
  record(tl, out, ok ? "ok  " : "FAIL", label, o->dtype, "rewrite", msg, NULL);
  if (ok) tl->pass++;
  else tl->fail++;
}

static void run_instance(Ctx *c, const TileProgram *tp, const char *label, const VerifyOpts *o, FILE *out,
                         Tally *tl) {
  int trials = o->trials > 0 ? o->trials : 3;
  tl->instances++;
  for (int t = 0; t < trials + VIN_COUNT - 1; t++) {
    VerifyInput kind = t < trials ? VIN_NORMAL : (VerifyInput)(t - trials + 1);
    uint64_t seed = o->seed * 1000 + (uint64_t)(t < trials ? t : 0);
    char name[64];
    if (kind == VIN_NORMAL) snprintf(name, sizeof name, "normal#%d", t);
    else snprintf(name, sizeof name, "%s", verify_input_name(kind));
    VerifyResult res;
    one_trial(c, tp, o->dtype, kind, seed, &res);
    record(tl, out, res.skipped ? "skip" : res.pass ? "ok  " : "FAIL", label, o->dtype, name, res.msg, &res);
    tl->elements += res.elements;
    tl->unverifiable += res.unverifiable;
    if (res.skipped) tl->skip++;
    else if (res.pass) tl->pass++, tl->vacuous += res.elements > 0 && res.unverifiable == res.elements;
    else tl->fail++;
  }
}

int verify_entry(Ctx *c, const Program *prog, const char *entry, SizeArg *sizes, int nsizes,
                 const VerifyOpts *o) {
  FILE *out = o->out ? o->out : stdout, *err = c->err ? c->err : stderr;
  SizeArg nats[MAX_NATS];
  int nn;
  {
    jmp_buf here;
    jmp_buf *prev = c->unwind;
    if (setjmp(here)) {
      c->unwind = prev;
      return 1;
    }
    c->unwind = &here;
    nn = elab_entry_nats(c, prog, entry, nats, MAX_NATS);
    c->unwind = prev;
  }
  for (int s = 0; s < nsizes; s++) {
    int k = 0;
    while (k < nn && strcmp(nats[k].name, sizes[s].name)) k++;
    if (k == nn) {
      fprintf(err, "tilesmith: error: --size %s: the entry '%s' has no Nat parameter named '%s'\n", sizes[s].name,
              entry, sizes[s].name);
      return 1;
    }
    nats[k].value = sizes[s].value;
  }
  for (int k = 0; k < nn; k++)
    if (nats[k].value < 0) {
      fprintf(err, "tilesmith: error: the entry '%s' needs a value for its Nat parameter '%s': pass --size %s=...\n",
              entry, nats[k].name, nats[k].name);
      return 1;
    }
  static const char *family_name[6] = {"as given", "no tails", "tails", "ones", "scaled", "wide"};
  int64_t done[5][MAX_NATS], vmax = 1;
  for (int k = 0; k < nn; k++) vmax = nats[k].value > vmax ? nats[k].value : vmax;
  int ndone = 0;
  Tally tl = {0};
  Json json = {.f = out, .pretty = true};
  if (o->json) {
    tl.json = &json;
    json_begin_obj(&json);
    json_kstr(&json, "entry", entry);
    json_kstr(&json, "dtype", dtype_name(o->dtype));
    json_key(&json, "results");
    json_begin_arr(&json);
  }
  Arena *home = c->arena;
  /* with a plan: sizes that change the graph's structure (a depth that
     unrolls layers) keep their value, so the plan carries over */
  bool structural[MAX_NATS] = {0};
  if (o->plan)
    for (int k = 0; k < nn; k++) {
      if (nats[k].value <= 1) continue; /* (every family keeps a 1) */
      SizeArg s[MAX_NATS];
      for (int q = 0; q < nn; q++) s[q] = (SizeArg){nats[q].name, nats[q].value, false};
      /* a depth changes the structure at every other value (a depth of 2
         too: probed at 3); a size may fold something at one small value
         only (so two probes) */
      s[k].value = nats[k].value == 2 ? 3 : nats[k].value > 3 ? 3 : 2;
      structural[k] = probe_matches(c, prog, entry, s, nn, o) == 0;
      if (structural[k] && nats[k].value > 5) {
        s[k].value = 5;
        structural[k] = probe_matches(c, prog, entry, s, nn, o) == 0;
      }
    }
  for (int fam = 0; fam < 6; fam++) {
    for (int level = 0; level < 4; level++) {
      SizeArg s[MAX_NATS];
      int64_t vals[MAX_NATS];
      for (int k = 0; k < nn; k++) {
        vals[k] = structural[k] ? nats[k].value : shrink(fam, level, nats[k].value, vmax);
        s[k] = (SizeArg){nats[k].name, vals[k], false};
      }
      bool dup = false, huge = false;
      for (int k = 0; k < nn; k++) huge |= fam == 0 && vals[k] > 512 && !structural[k];
      if (huge) break; /* not small: only shrunken instances */
      for (int d = 0; d < ndone; d++) dup |= !memcmp(done[d], vals, sizeof(int64_t) * (size_t)nn);
      if (dup) break; /* a smaller top would only repeat an instance */
      Arena *scratch = arena_new();
      c->arena = scratch;
      bool broken;
      char skip[300];
      Graph *orig;
      TileProgram *tp = build(c, prog, entry, s, nn, o->dtype, o, err, &broken, skip, sizeof skip, &orig);
      if (!tp && skip[0]) {
        /* the planned program has another structure at these sizes (a
           dimension of 1 folds something away): not this instance */
        char lab[512], why[400];
        size_t u = 0;
        lab[0] = 0;
        for (int k = 0; k < nn && u < sizeof lab; k++)
          u += (size_t)snprintf(lab + u, sizeof lab - u, "%s%s=%lld", k ? "," : "", s[k].name, (long long)s[k].value);
        if (u < sizeof lab) snprintf(lab + u, sizeof lab - u, " [%s]", family_name[fam]);
        snprintf(why, sizeof why, "the plan does not carry over: %s", skip);
        if (tl.json) record(&tl, out, "skip", lab, o->dtype, NULL, why, NULL);
        else fprintf(out, "skip %s: %s\n", lab, why);
        tl.nostruct++;
      }
      if (!tp && !skip[0] && !broken) tl.noelab++;
      bool run = broken || (tp && tile_work(tp) <= WORK_BUDGET);
      if (run) {
        char label[512];
        size_t used = 0;
        label[0] = 0;
        for (int k = 0; k < nn && used < sizeof label; k++)
          used += (size_t)snprintf(label + used, sizeof label - used, "%s%s=%lld", k ? "," : "", s[k].name,
                                   (long long)s[k].value);
        if (used < sizeof label) snprintf(label + used, sizeof label - used, "%s[%s]", nn ? " " : "", family_name[fam]);
        memcpy(done[ndone++], vals, sizeof(int64_t) * (size_t)nn);
        for (int k = 0; k < nn; k++)
          if (vals[k] > 1) {
            tl.nontrivial++;
            break;
          }
        if (broken) {
          /* an internal error of the lowering is a failure of the instance */
          record(&tl, out, "FAIL", label, o->dtype, NULL, "the lowering broke a tile invariant (printed above)", NULL);
          tl.instances++;
          tl.fail++;
        } else {
          if (orig) check_rewrite(c, orig, tp->g, label, o, out, &tl);
          run_instance(c, tp, label, o, out, &tl);
        }
      }
      c->arena = home;
      arena_free(scratch);
      if (run || fam == 0) break;
    }
  }
  if (tl.json) {
    json_end_arr(&json);
    json_kint(&json, "instances", tl.instances);
    json_kint(&json, "passed", tl.pass);
    json_kint(&json, "failed", tl.fail);
    json_kint(&json, "skipped_trials", tl.skip);
    json_kint(&json, "skipped_instances", tl.nostruct);
    json_kint(&json, "unelaborated_size_sets", tl.noelab);
    json_kint(&json, "elements", tl.elements);
    json_kint(&json, "unverifiable", tl.unverifiable);
    json_kint(&json, "vacuous_trials", tl.vacuous);
    json_key(&json, "ok");
    json_bool(&json, tl.instances && !tl.fail);
    json_end_obj(&json);
    fputc('\n', out);
  }
  if (!tl.instances) {
    fprintf(err, "tilesmith: error: no small instance of '%s' elaborates (tried sizes of every family)\n", entry);
    return 1;
  }
  /* sizes the program ties together (D = H * Dh as two parameters) shrink
     apart and do not elaborate: say so where only sizes of 1 were left */
  if (!tl.nontrivial && nn && tl.noelab)
    fprintf(err,
            "tilesmith: warning: only instances with every size 1 were checked (%d size set%s tried did not "
            "elaborate: sizes the program ties together, such as D = H * Dh, shrink apart); pass small --size "
            "values that fit together to verify larger ones\n",
            tl.noelab, tl.noelab == 1 ? "" : "s");
  if (tl.json) return tl.fail ? 1 : 0;
  fprintf(out, "verify %s%s, storage %s: %d instance%s, %d trials: %d passed, %d failed", entry,
          o->grad ? " (backward pass)" : "", dtype_name(o->dtype),
          tl.instances, tl.instances == 1 ? "" : "s", tl.pass + tl.fail + tl.skip, tl.pass, tl.fail);
  if (tl.vacuous)
    fprintf(out, " (%d of them vacuous: the error bound of every element checked admits any value)", tl.vacuous);
  if (tl.skip) fprintf(out, ", %d skipped (inputs out of range)", tl.skip);
  if (tl.nostruct) fprintf(out, ", %d instance%s skipped (the plan does not carry over)", tl.nostruct, tl.nostruct == 1 ? "" : "s");
  fprintf(out, "; error bound over |value| at %lld of %lld checked elements", (long long)tl.unverifiable,
          (long long)tl.elements);
  fputc('\n', out);
  return tl.fail ? 1 : 0;
}
