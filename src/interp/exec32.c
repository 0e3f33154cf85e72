/*
 * exec32.c: the float32 executor of the graph IR, for training on the CPU.
 *
 * Design.  The same walk as the float64 interpreter (interp.c): nodes in id
 * order, only those the targets depend on, each intermediate freed after
 * its last use, broadcasting through the strided iterator (iter.h).  A
 * reshape, and a slice of a contiguous range (a layer's W[l]), is a view
 * of its operand's block, which is freed when no value in it is needed; a
 * transpose of the last two dimensions that only products read is one too,
 * which sgemm reads transposed (a backward pass's g ⬝ Wᵀ copies nothing).  Values
 * are float arrays; integers and booleans are held exactly as floats up to
 * 2^24 (an index past that is refused).  Matrix products go to OpenBLAS
 * sgemm, which uses the machine's cores; elementwise kernels are loops over
 * contiguous operands with the op chosen outside the loop, so the compiler
 * vectorizes them, and take the strided path only where an operand is
 * broadcast.  Reductions fold in float32 as PyTorch's CPU kernels do
 * (pairwise within a row is not attempted: a row's sum of n terms errs by
 * about n·2^-24 relative, the bound a test of this file allows).
 *
 * The op semantics are the interpreter's (NaN wins max and min, relu keeps
 * NaN, a stable sigmoid); where they differ it is rounding alone.  The
 * interpreter stays the reference: tests compare the two on every example's
 * loss and gradients.  Errors (a gather index out of range, a tensor too
 * large) unwind through g->ctx after freeing what the run holds.
 */
#include "interp.h"
#include "iter.h"

#include <cblas.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ELEMS ((int64_t)1 << 30)

/* Elementwise ops and reductions split their work over the cores (OpenMP,
   each thread a contiguous share, so results do not depend on the thread
   count) when they touch at least this many elements. */
#define PAR_MIN 32768
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }
static int omp_get_num_threads(void) { return 1; }
#endif

/* this thread's share [*lo, *hi) of n items, inside a parallel region */
static void share(int64_t n, int64_t *lo, int64_t *hi) {
  int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
  *lo = n * t / nt, *hi = n * (t + 1) / nt;
}

typedef struct X32 {
  Graph *g;
  Ctx *ctx;
  Tensor **inputs;
  float **val;  /* per node id: its values (in its own block, or a view into another's) */
  float **block; /* per node id: the block it allocated (NULL: none, or freed) */
  int *owner;   /* per node id: the node whose block holds its values */
  int *views;   /* per block owner: values alive in it */
  int *uses;
  bool *live, *keep;
  bool *trans;   /* per node id: a transpose of the last two dimensions left to sgemm (val is its operand's) */
  bool *folded;  /* per node id: a select only a sum reads, evaluated inside that sum (never stored) */
  const Exec32Io *io;
  float **outbuf; /* per node id: the caller's float32 buffer it is computed into (a target) */
  int *place_in;  /* per node id: the concatenation it is computed inside (+1; 0: none) */
  int64_t *place_at; /* ... and at which element */
} X32;

static int64_t numel(const Shape *s) { return shape_numel(s); }

static void x32_free(X32 *x) {
  if (!x) return;
  if (x->block)
    for (int i = 0; i < x->g->nnodes; i++) free(x->block[i]);
  free(x->val);
  free(x->block);
  free(x->owner);
  free(x->views);
  free(x->uses);
  free(x->live);
  free(x->keep);
  free(x->trans);
  free(x->folded);
  free(x->outbuf);
  free(x->place_in);
  free(x->place_at);
  free(x);
}

static float *alloc(X32 *x, const Node *n);

/* n's values are at p, in a block of its own: `block` when the executor
   frees it, NULL when it is the caller's (an input read in place, a target
   computed in the caller's buffer). */
static float *own(X32 *x, const Node *n, float *p, float *block) {
  x->val[n->id] = p;
  x->block[n->id] = block;
  x->owner[n->id] = n->id;
  x->views[n->id] = 1;
  return p;
}

/* A piece of a concatenation along its leading dimensions is computed in
   place: the concatenation's block is made when its first piece is, and
   the piece is a view of it (the concatenation then copies nothing). */
static float *alloc_placed(X32 *x, const Node *n) {
  int c = x->place_in[n->id] - 1;
  if (!x->val[c]) alloc(x, x->g->nodes[c]);
  x->val[n->id] = x->val[c] + x->place_at[n->id];
  x->owner[n->id] = c;
  x->views[c]++;
  return x->val[n->id];
}

static float *alloc(X32 *x, const Node *n) {
  if (x->place_in[n->id]) return alloc_placed(x, n);
  int64_t N = numel(&n->shape);
  if (N < 0 || N > MAX_ELEMS)
    ts_error(x->ctx, n->site, "tensor of %lld elements is too large for the float32 executor", (long long)N);
  if (x->outbuf[n->id]) return own(x, n, x->outbuf[n->id], NULL); /* a target the caller takes in float32 */
  float *p = malloc((size_t)(N > 0 ? N : 1) * sizeof(float));
  if (!p) ts_error(x->ctx, n->site, "out of memory allocating a tensor of %lld elements", (long long)N);
  return own(x, n, p, p);
}

static const float *in(const X32 *x, const Node *n, int i) { return x->val[n->in[i]->id]; }

/* n's values are its operand's from element `at` on (a reshape, or a slice
   of a contiguous range): no copy, the operand's block lives on. */
static void view(X32 *x, const Node *n, int64_t at) {
  int a = n->in[0]->id, o = x->owner[a];
  x->val[n->id] = x->val[a] + at;
  x->owner[n->id] = o;
  x->views[o]++;
}

/* A value no longer needed: its block goes when no view of it is left. */
static void drop(X32 *x, int id) {
  int o = x->owner[id];
  x->val[id] = NULL;
  if (--x->views[o] == 0) free(x->block[o]), x->block[o] = NULL;
}

/* ---- elementwise ---- */

static float sigmoidf(float v) {
  if (v >= 0) return 1.0f / (1.0f + expf(-v));
  float e = expf(v);
  return e / (1.0f + e);
}

static void unary(X32 *x, const Node *n) {
  const float *a = in(x, n, 0);
  float *o = alloc(x, n);
  int64_t N = numel(&n->shape);
#define LOOP(expr)                                   \
  _Pragma("omp parallel for simd if (N >= PAR_MIN)") \
  for (int64_t i = 0; i < N; i++) {                  \
    float v = a[i];                                  \
    o[i] = (expr);                                   \
  }                                                  \
  return;
  switch (n->op) {
  case OP_NEG: LOOP(-v)
  case OP_EXP: LOOP(expf(v))
  case OP_LOG: LOOP(logf(v))
  case OP_SQRT: LOOP(sqrtf(v))
  case OP_RSQRT: LOOP(1.0f / sqrtf(v))
  case OP_TANH: LOOP(tanhf(v))
  case OP_ERF: LOOP(erff(v))
  case OP_SIGMOID: LOOP(sigmoidf(v))
  case OP_RELU: LOOP(isnan(v) || v > 0 ? v : 0.0f)
  case OP_ABS: LOOP(fabsf(v))
  case OP_CAST: LOOP(v)
  default: break;
  }
#undef LOOP
  ts_fatal(x->ctx, "exec32: '%s' is not a unary op", op_info[n->op].name);
}

static inline float fmaxn(float a, float b) { return isnan(a) ? a : isnan(b) ? b : a >= b ? a : b; }
static inline float fminn(float a, float b) { return isnan(a) ? a : isnan(b) ? b : a <= b ? a : b; }

/* o[j] = a[j*sa] op b[j*sb] over a row of len; the op chosen once per row,
   and the loop written apart for contiguous and one-element operands so the
   compiler vectorizes those (o never overlaps a or b). */
static void binary_row(Op op, float *restrict o, const float *restrict a, int64_t sa, const float *restrict b, int64_t sb,
                       int64_t len) {
#define ROW_LOOP(ua, vb, expr)                        \
  _Pragma("omp simd")                                 \
  for (int64_t j = 0; j < len; j++) {                 \
    float u = (ua), v = (vb);                         \
    o[j] = (expr);                                    \
  }
#define ROW(expr)                                     \
  {                                                   \
    if (sa == 1 && sb == 1) {                         \
      ROW_LOOP(a[j], b[j], expr)                      \
    } else if (sa == 1 && sb == 0) {                  \
      const float b0 = b[0];                          \
      ROW_LOOP(a[j], b0, expr)                        \
    } else if (sa == 0 && sb == 1) {                  \
      const float a0 = a[0];                          \
      ROW_LOOP(a0, b[j], expr)                        \
    } else {                                          \
      ROW_LOOP(a[j * sa], b[j * sb], expr)            \
    }                                                 \
    return;                                           \
  }
  switch (op) {
  case OP_ADD: ROW(u + v)
  case OP_SUB: ROW(u - v)
  case OP_MUL: ROW(u * v)
  case OP_DIV: ROW(u / v)
  case OP_IDIV: ROW((float)idiv_euclid(u, v))
  case OP_POW: ROW(powf(u, v))
  case OP_MAX: ROW(fmaxn(u, v))
  case OP_MIN: ROW(fminn(u, v))
  case OP_LT: ROW((float)(u < v))
  case OP_LE: ROW((float)(u <= v))
  case OP_GT: ROW((float)(u > v))
  case OP_GE: ROW((float)(u >= v))
  case OP_EQ: ROW((float)(u == v))
  case OP_NE: ROW((float)(u != v))
  default: break;
  }
#undef ROW
#undef ROW_LOOP
}

static void binary(X32 *x, const Node *n) {
  const Node *na = n->in[0], *nb = n->in[1];
  const float *a = in(x, n, 0), *b = in(x, n, 1);
  float *o = alloc(x, n);
  int64_t N = numel(&n->shape), Na = numel(&na->shape), Nb = numel(&nb->shape);
  /* each operand the output's shape or one element: one row over everything */
  if ((Na == 1 || shape_equal(&na->shape, &n->shape)) && (Nb == 1 || shape_equal(&nb->shape, &n->shape))) {
    int64_t sa = Na == 1 ? 0 : 1, sb = Nb == 1 ? 0 : 1;
#pragma omp parallel if (N >= PAR_MIN)
    {
      int64_t lo, hi;
      share(N, &lo, &hi);
      binary_row(n->op, o + lo, a + lo * sa, sa, b + lo * sb, sb, hi - lo);
    }
    return;
  }
  Iter base;
  iter_init(&base, &n->shape);
  iter_bcast(&base, 0, &na->shape, 1);
  iter_bcast(&base, 1, &nb->shape, 1);
  int64_t len = iter_len(&base), sa = iter_inner(&base, 0), sb = iter_inner(&base, 1), rows = len ? N / len : 0;
#pragma omp parallel if (N >= PAR_MIN)
  {
    Iter it = base;
    int64_t lo, hi;
    share(rows, &lo, &hi);
    iter_seek_row(&it, 2, lo);
    for (int64_t r = lo; r < hi; r++, iter_next_row(&it, 2))
      binary_row(n->op, o + r * len, a + it.off[0], sa, b + it.off[1], sb, len);
  }
}

/* Does n read its operand j?  select(c, a, a) is a stretched to n's shape
   whatever c says (the gradient's zeros of a shape, grad.c): c is not read. */
static bool reads(const Node *n, int j) { return !(n->op == OP_SELECT && j == 0 && n->in[1] == n->in[2]); }

static void select3(X32 *x, const Node *n) {
  float *o = alloc(x, n);
  int64_t N = numel(&n->shape);
  if (!reads(n, 0)) { /* a, stretched */
    const float *a = in(x, n, 1);
    Iter it;
    iter_init(&it, &n->shape);
    iter_bcast(&it, 0, &n->in[1]->shape, 1);
    int64_t len = iter_len(&it), sa = iter_inner(&it, 0);
    for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 1))
      for (int64_t j = 0; j < len; j++) o[i + j] = a[it.off[0] + j * sa];
    return;
  }
  const float *c = in(x, n, 0), *a = in(x, n, 1), *b = in(x, n, 2);
  Iter base;
  iter_init(&base, &n->shape);
  for (int k = 0; k < 3; k++) iter_bcast(&base, k, &n->in[k]->shape, 1);
  int64_t len = iter_len(&base), sc = iter_inner(&base, 0), sa = iter_inner(&base, 1), sb = iter_inner(&base, 2);
  int64_t rows = len ? N / len : 0;
#pragma omp parallel if (N >= PAR_MIN)
  {
    Iter it = base;
    int64_t lo, hi;
    share(rows, &lo, &hi);
    iter_seek_row(&it, 3, lo);
    for (int64_t r = lo; r < hi; r++, iter_next_row(&it, 3)) {
      const float *pc = c + it.off[0], *pa = a + it.off[1], *pb = b + it.off[2];
      float *po = o + r * len;
#pragma omp simd
      for (int64_t j = 0; j < len; j++) po[j] = pc[j * sc] != 0 ? pa[j * sa] : pb[j * sb];
    }
  }
}

/* ---- reductions, products, layout ---- */

/* The sum of r[0], r[st], ... (len terms), in order. */
static float row_sum_strided(const float *r, int64_t st, int64_t len) {
  float t = 0;
  for (int64_t k = 0; k < len; k++) t += r[k * st];
  return t;
}

/* The sum of r[0..len) as eight interleaved running sums added at the end:
   the same order on every machine and thread count. */
static float row_sum(const float *r, int64_t len) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= len; k += 8)
    for (int l = 0; l < 8; l++) s[l] += r[k + l];
  float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (; k < len; k++) t += r[k];
  return t;
}

/* sum(select(c, a, b)) along an axis without storing the select: each row
   of the select's shape added into the output (whose stride along the
   summed axis is 0), in the order reduce() adds them; where c is constant
   along a row and picks a constant 0, the row adds nothing and is skipped
   (a gather's gradient: one row of T x V hits). */
static void reduce_select(X32 *x, const Node *n) {
  const Node *s = n->in[0];
  const float *c = in(x, s, 0), *a = in(x, s, 1), *b = in(x, s, 2);
  float *o = alloc(x, n);
  memset(o, 0, (size_t)numel(&n->shape) * sizeof(float));
  bool zero_a = s->in[1]->op == OP_CONST && s->in[1]->value == 0, zero_b = s->in[2]->op == OP_CONST && s->in[2]->value == 0;
  int64_t N = numel(&s->shape);
  Iter it;
  iter_init(&it, &s->shape);
  for (int k = 0; k < 3; k++) iter_bcast(&it, k, &s->in[k]->shape, 1);
  iter_bcast(&it, 3, &n->shape, 1);
  int64_t len = iter_len(&it), sc = iter_inner(&it, 0), sa = iter_inner(&it, 1), sb = iter_inner(&it, 2),
          so = iter_inner(&it, 3);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 4)) {
    const float *pc = c + it.off[0], *pa = a + it.off[1], *pb = b + it.off[2];
    float *po = o + it.off[3];
    if (sc == 0) { /* one choice for the row */
      bool t = pc[0] != 0;
      if (t ? zero_a : zero_b) continue;
      const float *src = t ? pa : pb;
      int64_t ss = t ? sa : sb;
      if (so == 0) po[0] += row_sum_strided(src, ss, len);
      else
        for (int64_t j = 0; j < len; j++) po[j] += src[j * ss];
    } else {
      for (int64_t j = 0; j < len; j++) po[j * so] += pc[j * sc] != 0 ? pa[j * sa] : pb[j * sb];
    }
  }
}

static void reduce(X32 *x, const Node *n) {
  if (x->folded[n->in[0]->id]) {
    reduce_select(x, n);
    return;
  }
  const Node *na = n->in[0];
  const float *a = in(x, n, 0);
  int ax = n->axis;
  int64_t len = na->shape.d[ax].n, outer = dims_prod(&na->shape, 0, ax),
          inner = dims_prod(&na->shape, ax + 1, na->shape.rank);
  float *o = alloc(x, n);
  const Monoid *m = op_monoid(n->op);
  if (len == 0) {
    if (!isfinite(m->identity) && outer * inner > 0)
      ts_error(x->ctx, n->site, "%s over an empty axis (axis %d has size 0)", op_info[n->op].name, ax);
    for (int64_t i = 0; i < outer * inner; i++) o[i] = (float)m->identity;
    return;
  }
  Op comb = m->combine;
  if (comb != OP_ADD && comb != OP_MAX && comb != OP_MIN)
    ts_fatal(x->ctx, "exec32: a monoid combining by '%s'", op_info[comb].name);
  /* each thread a share of the rows kept (outer), or, when there are too
     few of them, of the columns (inner): the same folds either way */
#pragma omp parallel if (outer * len * inner >= PAR_MIN)
  {
    int64_t q0 = 0, q1 = outer, c0 = 0, c1 = inner;
    if (outer >= omp_get_num_threads()) share(outer, &q0, &q1);
    else share(inner, &c0, &c1);
    if (inner == 1 && comb == OP_ADD) /* a row's sum: eight running sums (vectorized), then one */
      for (int64_t q = q0; q < q1; q++) o[q] = row_sum(a + q * len, len);
    else
    for (int64_t q = q0; q < q1; q++) {
      float *acc = o + q * inner;
      const float *src = a + q * len * inner;
      memcpy(acc + c0, src + c0, (size_t)(c1 - c0) * sizeof(float));
      for (int64_t k = 1; k < len; k++) {
        const float *row = src + k * inner;
        switch (comb) {
        case OP_ADD:
#pragma omp simd
          for (int64_t i = c0; i < c1; i++) acc[i] += row[i];
          break;
        case OP_MAX:
          for (int64_t i = c0; i < c1; i++) acc[i] = isnan(row[i]) || row[i] > acc[i] ? row[i] : acc[i];
          break;
        default: /* OP_MIN, checked above */
          for (int64_t i = c0; i < c1; i++) acc[i] = isnan(row[i]) || row[i] < acc[i] ? row[i] : acc[i];
          break;
        }
      }
    }
  }
}

static Shape batch_of(const Shape *s) {
  Shape b = *s;
  b.rank = s->rank - 2;
  return b;
}

/* Does permute n swap the last two dimensions only? */
static bool swaps_last_two(const Node *n) {
  int r = n->shape.rank;
  if (n->op != OP_PERMUTE || r < 2 || n->perm[r - 1] != r - 2 || n->perm[r - 2] != r - 1) return false;
  for (int i = 0; i < r - 2; i++)
    if (n->perm[i] != i) return false;
  return true;
}

static void matmul(X32 *x, const Node *n) {
  const Node *na = n->in[0], *nb = n->in[1];
  const float *a = in(x, n, 0), *b = in(x, n, 1);
  bool ta = x->trans[na->id], tb = x->trans[nb->id]; /* read transposed from the permute's operand */
  int ra = na->shape.rank, rb = nb->shape.rank;
  int64_t m = na->shape.d[ra - 2].n, k = na->shape.d[ra - 1].n, nn = nb->shape.d[rb - 1].n;
  float *o = alloc(x, n);
  if (m > INT_MAX || k > INT_MAX || nn > INT_MAX) ts_error(x->ctx, n->site, "matrix dimension too large for BLAS");
  if (k == 0) memset(o, 0, (size_t)numel(&n->shape) * sizeof(float));
  if (m == 0 || k == 0 || nn == 0) return;
  Shape bo = batch_of(&n->shape), ba = batch_of(&na->shape), bb = batch_of(&nb->shape);
  Iter it;
  iter_init(&it, &bo);
  iter_bcast(&it, 0, &ba, m * k);
  iter_bcast(&it, 1, &bb, k * nn);
  int64_t nbatch = dims_prod(&bo, 0, bo.rank);
  Exec32Prof *p = x->io ? x->io->prof : NULL;
  double t0 = p ? ts_seconds() : 0;
  for (int64_t i = 0; i < nbatch; i++, iter_next(&it, 2))
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)nn, (int)k,
                1.0f, a + it.off[0], ta ? (int)m : (int)k, b + it.off[1], tb ? (int)k : (int)nn, 0.0f, o + i * m * nn,
                (int)nn);
  if (p) {
    p->gemm_s += ts_seconds() - t0;
    p->gemm_flops += 2.0 * (double)nbatch * (double)m * (double)nn * (double)k;
    int j = 0;
    while (j < p->ngemm && !(p->gemm[j].ta == ta && p->gemm[j].tb == tb && p->gemm[j].m == (int)m &&
                             p->gemm[j].n == (int)nn && p->gemm[j].k == (int)k))
      j++;
    if (j == p->ngemm && j < EXEC32_MAX_GEMMS) p->gemm[p->ngemm++] = (Exec32Gemm){ta, tb, (int)m, (int)nn, (int)k, 0};
    if (j < p->ngemm) p->gemm[j].calls += nbatch;
  }
}

static void permute(X32 *x, const Node *n) {
  if (x->trans[n->id]) { /* only products read it: they read its operand transposed */
    view(x, n, 0);
    return;
  }
  const Node *na = n->in[0];
  const float *a = in(x, n, 0);
  float *o = alloc(x, n);
  int64_t st[TS_MAX_RANK], N = numel(&n->shape);
  row_strides(&na->shape, st);
  Iter it;
  iter_init(&it, &n->shape);
  for (int i = 0; i < n->shape.rank; i++) it.st[0][i] = st[n->perm[i]];
  int64_t len = iter_len(&it), sa = iter_inner(&it, 0);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 1))
    for (int64_t j = 0; j < len; j++) o[i + j] = a[it.off[0] + j * sa];
}

static void slice(X32 *x, const Node *n) {
  const Node *na = n->in[0];
  const float *a = in(x, n, 0);
  int ax = n->axis;
  int64_t outer = dims_prod(&na->shape, 0, ax), inner = dims_prod(&na->shape, ax + 1, na->shape.rank);
  int64_t len = na->shape.d[ax].n, w = n->hi - n->lo;
  if (outer == 1) { /* a contiguous range: W[l] of a stacked weight */
    view(x, n, n->lo * inner);
    return;
  }
  float *o = alloc(x, n);
  for (int64_t q = 0; q < outer; q++)
    memcpy(o + q * w * inner, a + (q * len + n->lo) * inner, (size_t)(w * inner) * sizeof(float));
}

static void concat(X32 *x, const Node *n) {
  int ax = n->axis;
  float *o = x->val[n->id] ? x->val[n->id] : alloc(x, n), *dst = o; /* made already by a piece computed in it */
  int64_t outer = dims_prod(&n->shape, 0, ax), inner = dims_prod(&n->shape, ax + 1, n->shape.rank);
  for (int64_t q = 0; q < outer; q++)
    for (int i = 0; i < n->nin; i++) {
      int64_t chunk = n->in[i]->shape.d[ax].n * inner;
      if (in(x, n, i) + q * chunk != dst) memcpy(dst, in(x, n, i) + q * chunk, (size_t)chunk * sizeof(float));
      dst += chunk;
    }
}

/* Which pieces of concatenations can be computed in place: a concatenation
   along its leading dimensions (contiguous pieces) whose operand is made by
   an op that writes a fresh block (through reshapes, each read once) and is
   read by nothing else, not a target and not placed already. */
static void plan_placement(X32 *x, int last) {
  for (int i = 0; i <= last; i++) {
    const Node *c = x->g->nodes[i];
    if (!x->live[i] || c->op != OP_CONCAT || dims_prod(&c->shape, 0, c->axis) != 1) continue;
    int64_t at = 0;
    for (int j = 0; j < c->nin; j++) {
      const Node *p = c->in[j];
      int64_t size = numel(&p->shape);
      bool ok = x->uses[p->id] == 1;
      while (ok && p->op == OP_RESHAPE) p = p->in[0], ok = x->uses[p->id] == 1;
      switch (op_info[p->op].cls) {
      case OPC_UNARY:
      case OPC_BINARY:
      case OPC_COMPARE:
      case OPC_SELECT:
      case OPC_REDUCE:
      case OPC_MATMUL: break;
      case OPC_LEAF:
      case OPC_LAYOUT:
      case OPC_CONCAT:
      case OPC_GATHER: ok = false; break;
      }
      if (ok && !x->keep[p->id] && !x->place_in[p->id]) x->place_in[p->id] = i + 1, x->place_at[p->id] = at;
      at += size;
    }
  }
}

static void gather(X32 *x, const Node *n) {
  const Node *nx = n->in[0], *ni = n->in[1];
  const float *xv = in(x, n, 0), *iv = in(x, n, 1);
  float *o = alloc(x, n);
  int ax = n->axis, xax = ax - (n->shape.rank - nx->shape.rank);
  int64_t xst[TS_MAX_RANK], N = numel(&n->shape), size = nx->shape.d[xax].n;
  row_strides(&nx->shape, xst);
  Iter it;
  iter_init(&it, &n->shape);
  iter_bcast(&it, 0, &ni->shape, 1);
  iter_bcast(&it, 1, &nx->shape, 1);
  it.st[1][ax] = 0;
  int64_t len = iter_len(&it), si = iter_inner(&it, 0), sx = iter_inner(&it, 1);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 2))
    for (int64_t j = 0; j < len; j++) {
      float v = iv[it.off[0] + j * si];
      if (!(v >= 0 && v < (float)size) || v != floorf(v))
        ts_error(x->ctx, n->site, "gather index %lld out of range [0, %lld)", isnan(v) ? -1LL : (long long)v,
                 (long long)size);
      o[i + j] = xv[it.off[1] + j * sx + (int64_t)v * xst[xax]];
    }
}

static void leaf(X32 *x, const Node *n) {
  if (n->op == OP_INPUT && x->io && x->io->in32 && x->io->in32[n->input_index]) { /* float32 already: read in place */
    own(x, n, (float *)x->io->in32[n->input_index], NULL);
    return;
  }
  float *o = alloc(x, n);
  int64_t N = numel(&n->shape);
  switch (n->op) {
  case OP_INPUT: {
    const Tensor *t = x->inputs ? x->inputs[n->input_index] : NULL;
    char want[256], got[256];
    if (!t) ts_error(x->ctx, n->site, "no value given for input '%s'", n->name);
    if (!shape_equal(&t->shape, &n->shape))
      ts_error(x->ctx, n->site, "input '%s' has shape %s, expected %s", n->name, shape_str(&t->shape, got, sizeof got),
               shape_str(&n->shape, want, sizeof want));
    bool index = n->kind != EK_REAL;
    for (int64_t i = 0; i < N; i++) {
      if (index && fabs(t->data[i]) > 16777216.0)
        ts_error(x->ctx, n->site, "input '%s' holds %g, past float32's exact integers", n->name, t->data[i]);
      o[i] = (float)t->data[i];
    }
    return;
  }
  case OP_CONST: o[0] = (float)n->value; return;
  case OP_IOTA:
    if (N > 16777216) ts_error(x->ctx, n->site, "iota %lld is past float32's exact integers", (long long)N);
    for (int64_t i = 0; i < N; i++) o[i] = (float)i;
    return;
  default: break;
  }
}

static void eval(X32 *x, const Node *n) {
  switch (op_info[n->op].cls) {
  case OPC_LEAF: leaf(x, n); return;
  case OPC_UNARY: unary(x, n); return;
  case OPC_BINARY:
  case OPC_COMPARE: binary(x, n); return;
  case OPC_SELECT: select3(x, n); return;
  case OPC_REDUCE: reduce(x, n); return;
  case OPC_MATMUL: matmul(x, n); return;
  case OPC_CONCAT: concat(x, n); return;
  case OPC_GATHER: gather(x, n); return;
  case OPC_LAYOUT:
    switch (n->op) {
    case OP_PERMUTE: permute(x, n); return;
    case OP_SLICE: slice(x, n); return;
    case OP_RESHAPE: view(x, n, 0); return; /* same elements, row-major */
    default: break;
    }
    break;
  }
  ts_fatal(x->ctx, "exec32: node %%%d has an op it does not run ('%s')", n->id, op_info[n->op].name);
}

/* ---- the run ---- */

/* n has been evaluated: each value it read loses a reader, and goes with
   its last one (a folded select's operands were read by n itself). */
static void release(X32 *x, const Node *n) {
  for (int j = 0; j < n->nin; j++) {
    int a = n->in[j]->id;
    if (!reads(n, j)) continue;
    if (x->folded[a]) release(x, n->in[j]);
    else if (--x->uses[a] == 0 && !x->keep[a]) drop(x, a);
  }
}

static void run(X32 *x, Node *const *targets, int nt, Tensor **out) {
  Graph *g = x->g;
  int last = -1;
  for (int i = 0; i < nt; i++) {
    x->keep[targets[i]->id] = x->live[targets[i]->id] = true;
    if (x->io && x->io->out32 && x->io->out32[i] && !x->outbuf[targets[i]->id]) x->outbuf[targets[i]->id] = x->io->out32[i];
    if (targets[i]->id > last) last = targets[i]->id;
  }
  for (int i = last; i >= 0; i--) {
    const Node *n = g->nodes[i];
    if (!x->live[i]) continue;
    for (int j = 0; j < n->nin; j++)
      if (reads(n, j)) x->live[n->in[j]->id] = true, x->uses[n->in[j]->id]++;
  }
  plan_placement(x, last);
  /* a transpose that only products read is never written out */
  for (int i = 0; i <= last; i++) x->trans[i] = x->live[i] && !x->keep[i] && swaps_last_two(g->nodes[i]);
  for (int i = 0; i <= last; i++)
    for (int j = 0; x->live[i] && j < g->nodes[i]->nin; j++)
      if (g->nodes[i]->op != OP_MATMUL) x->trans[g->nodes[i]->in[j]->id] = false;
  /* a select that only a sum reads is evaluated inside the sum */
  for (int i = 0; i <= last; i++) {
    const Node *n = g->nodes[i], *s = n->nin ? n->in[0] : NULL;
    if (x->live[i] && n->op == OP_SUM && s->op == OP_SELECT && reads(s, 0) && x->uses[s->id] == 1 && !x->keep[s->id] &&
        !x->outbuf[s->id])
      x->folded[s->id] = true;
  }
  for (int i = 0; i <= last; i++) {
    const Node *n = g->nodes[i];
    if (!x->live[i] || x->folded[i]) continue;
    ts_step(x->ctx, n->pos);
    eval(x, n);
    release(x, n);
  }
  for (int i = 0; i < nt; i++) {
    const Node *n = targets[i];
    if (x->io && x->io->out32 && x->io->out32[i]) { /* unless computed there (a view, an input, a repeat) */
      if (x->val[n->id] != x->io->out32[i])
        memcpy(x->io->out32[i], x->val[n->id], (size_t)numel(&n->shape) * sizeof(float));
      continue;
    }
    Tensor *t = tensor_new(&n->shape, n->kind);
    if (!t) ts_error(x->ctx, n->site, "out of memory returning a tensor");
    out[i] = t; /* the caller's from here: freed by it on an unwind */
    int64_t N = numel(&n->shape);
    for (int64_t e = 0; e < N; e++) t->data[e] = x->val[n->id][e];
  }
}

void exec32_run_many(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out) {
  exec32_run_io(g, inputs, targets, n, out, NULL);
}

void exec32_run_io(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out, const Exec32Io *io) {
  static bool heap_kept;
  if (!heap_kept) {
    /* a training step frees and allocates the same large buffers every
       step: kept in the heap instead of mapped and unmapped each time (the
       kernel's page faults on fresh mappings took most of the step) */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    heap_kept = true;
  }
  size_t nn = (size_t)(g->nnodes > 0 ? g->nnodes : 1);
  X32 *x = calloc(1, sizeof *x);
  if (x) {
    x->g = g, x->ctx = g->ctx, x->inputs = inputs, x->io = io;
    x->val = calloc(nn, sizeof *x->val);
    x->block = calloc(nn, sizeof *x->block);
    x->owner = calloc(nn, sizeof *x->owner);
    x->views = calloc(nn, sizeof *x->views);
    x->uses = calloc(nn, sizeof *x->uses);
    x->live = calloc(nn, sizeof *x->live);
    x->keep = calloc(nn, sizeof *x->keep);
    x->trans = calloc(nn, sizeof *x->trans);
    x->folded = calloc(nn, sizeof *x->folded);
    x->outbuf = calloc(nn, sizeof *x->outbuf);
    x->place_in = calloc(nn, sizeof *x->place_in);
    x->place_at = calloc(nn, sizeof *x->place_at);
  }
  if (!x || !x->val || !x->block || !x->owner || !x->views || !x->uses || !x->live || !x->keep || !x->trans || !x->folded ||
      !x->outbuf || !x->place_in || !x->place_at) {
    x32_free(x);
    ts_fatal(g->ctx, "out of memory starting the float32 executor");
  }
  for (int i = 0; i < n; i++) out[i] = NULL;
  Ctx *c = g->ctx;
  jmp_buf here;
  jmp_buf *volatile prev = c->unwind;
  if (prev && setjmp(here)) {
    c->unwind = prev;
    for (int i = 0; i < n; i++) tensor_free(out[i]), out[i] = NULL;
    x32_free(x);
    longjmp(*prev, 1);
  }
  if (prev) c->unwind = &here;
  double t0 = io && io->prof ? ts_seconds() : 0, g0 = io && io->prof ? io->prof->gemm_s : 0;
  run(x, targets, n, out);
  if (io && io->prof) io->prof->other_s += ts_seconds() - t0 - (io->prof->gemm_s - g0);
  c->unwind = prev;
  x32_free(x);
}
