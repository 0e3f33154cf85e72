/*
 * interp.c: the float64 reference interpreter of the graph IR.
 *
 * Design.  A run keeps one Tensor pointer per node (Run.val).  Before
 * evaluating, it marks the nodes the output depends on (dead nodes are never
 * evaluated, so an unused gather cannot fail) and counts, for each node, how
 * many live operand slots name it; after a node is computed each operand's
 * count drops, and an intermediate whose count reaches zero is freed at once.
 * Input tensors belong to the caller and are never freed; the output is
 * detached from the run and returned (copied when it is itself an input).
 *
 * Errors.  A user error (an out-of-range gather index, a tensor too large to
 * hold, the step limit in ts_step) unwinds through g->ctx with longjmp.  So
 * that nothing leaks, interp_run installs its own jmp_buf in ctx->unwind:
 * on an unwind it frees every tensor the run owns, restores the caller's
 * jmp_buf and unwinds on to it.  A tensor is stored in Run.val the moment it
 * is allocated, so the cleanup always sees it.
 *
 * Evaluation.  One switch over Op (no default: a new row in ops.def makes the
 * compiler point here) maps each op to a kernel; elementwise kernels take the
 * scalar function as a pointer.  Broadcasting (binary, compare, select,
 * gather, matmul batch dimensions) and permutation all use one strided
 * iterator, Iter (iter.h, shared with bound.c), which walks the output
 * row-major and keeps one element offset per operand, with stride 0 on
 * broadcast dimensions.
 */
#include "interp.h"
#include "iter.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_ELEMS ((int64_t)1 << 28)

/* ---- tensors ---- */

static int64_t numel_checked(const Shape *s) {
  if (s->rank < 0 || s->rank > TS_MAX_RANK) return -1;
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->d[i].n;
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

Tensor *tensor_new(const Shape *s, ElemKind k) {
  int64_t n = numel_checked(s);
  if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof(double)) return NULL;
  Tensor *t = malloc(sizeof *t);
  if (!t) return NULL;
  t->shape = *s;
  t->kind = k;
  t->data = calloc(n ? (size_t)n : 1, sizeof(double));
  if (!t->data) {
    free(t);
    return NULL;
  }
  return t;
}

void tensor_free(Tensor *t) {
  if (!t) return;
  free(t->data);
  free(t);
}

static int64_t tensor_numel(const Tensor *t) { return numel_checked(&t->shape); }

/* ---- a run: values, use counts, cleanup on unwind ---- */

typedef struct Run {
  Graph *g;
  Ctx *ctx;
  Tensor **inputs;
  Tensor **given; /* interp_run_ex: values standing for nodes (borrowed), or NULL */
  const Node *target; /* the node evaluated (the output unless interp_run_ex says) */
  const bool *keep;   /* interp_run_ex: nodes whose values the caller keeps, or NULL */
  bool keep_roots;    /* interp_run_many: the kept nodes are evaluated too (liveness roots) */
  Tensor **val;   /* per node id; INPUT and given entries are borrowed */
  int *uses;      /* live operand slots naming each node */
  bool *live;
  int64_t max_elems;
} Run;

/* Is node i's value borrowed (an input or a given value), not the run's? */
static bool borrowed(const Run *r, int i) {
  return r->g->nodes[i]->op == OP_INPUT || (r->given && r->given[i]);
}

static void run_free(Run *r) {
  if (!r) return;
  if (r->val) {
    for (int i = 0; i < r->g->nnodes; i++)
      if (!borrowed(r, i)) tensor_free(r->val[i]);
  }
  free(r->val);
  free(r->uses);
  free(r->live);
  free(r);
}

static int64_t elem_limit(const Ctx *c) {
  return c->max_elems > 0 ? c->max_elems : DEFAULT_MAX_ELEMS;
}

/* Allocate a tensor of shape s for a node at `site`, or report why not. */
static Tensor *alloc_checked(Ctx *c, const Shape *s, ElemKind k, Pos site) {
  int64_t n = numel_checked(s), limit = elem_limit(c);
  if (n < 0 || n > limit)
    ts_error(c, site,
             "tensor of %lld elements is too large to evaluate here (limit "
             "%lld); evaluate at smaller --size",
             (long long)n, (long long)limit);
  Tensor *t = tensor_new(s, k);
  if (!t)
    ts_error(c, site, "out of memory allocating a tensor of %lld elements",
             (long long)n);
  return t;
}

/* The result tensor of node n, owned by the run from the start. */
static Tensor *run_alloc(Run *r, const Node *n) {
  Tensor *t = alloc_checked(r->ctx, &n->shape, n->kind, n->site);
  r->val[n->id] = t;
  return t;
}

static const Tensor *arg(const Run *r, const Node *n, int i) {
  return r->val[n->in[i]->id];
}

/* ---- leaves ---- */

static Tensor *eval_input(Run *r, Node *n) {
  Tensor *t = r->inputs ? r->inputs[n->input_index] : NULL;
  char want[256], got[256];
  if (!t) ts_error(r->ctx, n->site, "no value given for input '%s'", n->name);
  if (!shape_equal(&t->shape, &n->shape))
    ts_error(r->ctx, n->site, "input '%s' has shape %s, expected %s", n->name,
             shape_str(&t->shape, got, sizeof got),
             shape_str(&n->shape, want, sizeof want));
  r->val[n->id] = t;
  return t;
}

static Tensor *eval_const(Run *r, Node *n) {
  Tensor *t = run_alloc(r, n);
  t->data[0] = n->value;
  return t;
}

static Tensor *eval_iota(Run *r, Node *n) {
  Tensor *t = run_alloc(r, n);
  for (int64_t i = 0; i < n->shape.d[0].n; i++) t->data[i] = (double)i;
  return t;
}

/* ---- elementwise ---- */

typedef double (*Fn1)(double);
typedef double (*Fn2)(double, double);

static double f_neg(double x) { return -x; }
static double f_rsqrt(double x) { return 1.0 / sqrt(x); }
static double f_sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e); /* also NaN for NaN */
}
static double f_relu(double x) { return isnan(x) || x > 0 ? x : 0.0; }
static double f_id(double x) { return x; }
static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
/* np.maximum / np.minimum: a NaN operand wins. */
static double f_max(double a, double b) {
  return isnan(a) ? a : isnan(b) ? b : a >= b ? a : b;
}
static double f_min(double a, double b) {
  return isnan(a) ? a : isnan(b) ? b : a <= b ? a : b;
}
static double f_lt(double a, double b) { return a < b; }
static double f_le(double a, double b) { return a <= b; }
static double f_gt(double a, double b) { return a > b; }
static double f_ge(double a, double b) { return a >= b; }
static double f_eq(double a, double b) { return a == b; }
static double f_ne(double a, double b) { return a != b; }

static Tensor *eval_unary(Run *r, Node *n, Fn1 f) {
  const Tensor *a = arg(r, n, 0);
  Tensor *t = run_alloc(r, n);
  int64_t N = tensor_numel(t);
  for (int64_t i = 0; i < N; i++) t->data[i] = f(a->data[i]);
  return t;
}

static Tensor *eval_binary(Run *r, Node *n, Fn2 f) {
  const Tensor *a = arg(r, n, 0), *b = arg(r, n, 1);
  Tensor *t = run_alloc(r, n);
  int64_t N = tensor_numel(t);
  if (shape_equal(&a->shape, &t->shape) && shape_equal(&b->shape, &t->shape)) {
    for (int64_t i = 0; i < N; i++) t->data[i] = f(a->data[i], b->data[i]);
    return t;
  }
  Iter it;
  iter_init(&it, &t->shape);
  iter_bcast(&it, 0, &a->shape, 1);
  iter_bcast(&it, 1, &b->shape, 1);
  int64_t len = iter_len(&it), sa = iter_inner(&it, 0), sb = iter_inner(&it, 1);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 2)) {
    const double *pa = a->data + it.off[0], *pb = b->data + it.off[1];
    double *po = t->data + i;
    for (int64_t j = 0; j < len; j++) po[j] = f(pa[j * sa], pb[j * sb]);
  }
  return t;
}

static Tensor *eval_select(Run *r, Node *n) {
  const Tensor *c = arg(r, n, 0), *a = arg(r, n, 1), *b = arg(r, n, 2);
  Tensor *t = run_alloc(r, n);
  int64_t N = tensor_numel(t);
  Iter it;
  iter_init(&it, &t->shape);
  iter_bcast(&it, 0, &c->shape, 1);
  iter_bcast(&it, 1, &a->shape, 1);
  iter_bcast(&it, 2, &b->shape, 1);
  int64_t len = iter_len(&it), sc = iter_inner(&it, 0), sa = iter_inner(&it, 1),
          sb = iter_inner(&it, 2);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 3)) {
    const double *pc = c->data + it.off[0], *pa = a->data + it.off[1], *pb = b->data + it.off[2];
    double *po = t->data + i;
    for (int64_t j = 0; j < len; j++) po[j] = pc[j * sc] != 0 ? pa[j * sa] : pb[j * sb];
  }
  return t;
}

/* ---- reductions ---- */

/* Reduce along n->axis with its monoid, keeping the axis with size 1: the
   first element along the axis starts the accumulator, the rest are folded
   in sequentially (np.max / np.min: once a NaN is seen the result stays
   NaN).  An empty axis gives the identity where it is finite (a sum's 0);
   a max of nothing is an error. */
static Tensor *eval_reduce(Run *r, Node *n) {
  const Monoid *m = op_monoid(n->op);
  bool empty_ok = isfinite(m->identity);
  const Tensor *a = arg(r, n, 0);
  int ax = n->axis;
  int64_t len = a->shape.d[ax].n;
  int64_t outer = dims_prod(&a->shape, 0, ax);
  int64_t inner = dims_prod(&a->shape, ax + 1, a->shape.rank);
  Tensor *t = run_alloc(r, n);
  if (len == 0 && !empty_ok && outer * inner > 0)
    ts_error(r->ctx, n->site, "%s over an empty axis (axis %d has size 0)",
             op_info[n->op].name, ax);
  for (int64_t o = 0; o < outer && len > 0; o++) {
    double *acc = t->data + o * inner;
    const double *src = a->data + o * len * inner;
    memcpy(acc, src, (size_t)inner * sizeof(double));
    for (int64_t k = 1; k < len; k++)
      for (int64_t i = 0; i < inner; i++)
        acc[i] = monoid_fold(m, acc[i], src[k * inner + i], true);
  }
  return t;
}

/* ---- matmul ---- */

/* The leading `rank - 2` dimensions of s: the batch shape. */
static Shape batch_shape(const Shape *s) {
  Shape b = *s;
  b.rank = s->rank - 2;
  return b;
}

static Tensor *eval_matmul(Run *r, Node *n) {
  const Tensor *a = arg(r, n, 0), *b = arg(r, n, 1);
  int ra = a->shape.rank, rb = b->shape.rank;
  int64_t m = a->shape.d[ra - 2].n, k = a->shape.d[ra - 1].n;
  int64_t nn = b->shape.d[rb - 1].n;
  Tensor *t = run_alloc(r, n);
  if (m > INT_MAX || k > INT_MAX || nn > INT_MAX)
    ts_error(r->ctx, n->site, "matrix dimension too large for BLAS");
  if (m == 0 || k == 0 || nn == 0) return t; /* zeros (or nothing) */
  Shape bo = batch_shape(&t->shape), ba = batch_shape(&a->shape),
        bb = batch_shape(&b->shape);
  Iter it;
  iter_init(&it, &bo);
  iter_bcast(&it, 0, &ba, m * k);
  iter_bcast(&it, 1, &bb, k * nn);
  int64_t nb = dims_prod(&bo, 0, bo.rank);
  for (int64_t i = 0; i < nb; i++, iter_next(&it, 2))
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)nn,
                (int)k, 1.0, a->data + it.off[0], (int)k, b->data + it.off[1],
                (int)nn, 0.0, t->data + i * m * nn, (int)nn);
  return t;
}

/* ---- data movement ---- */

static Tensor *eval_permute(Run *r, Node *n) {
  const Tensor *a = arg(r, n, 0);
  Tensor *t = run_alloc(r, n);
  int64_t st[TS_MAX_RANK], N = tensor_numel(t);
  row_strides(&a->shape, st);
  Iter it;
  iter_init(&it, &t->shape);
  for (int i = 0; i < t->shape.rank; i++) it.st[0][i] = st[n->perm[i]];
  int64_t len = iter_len(&it), sa = iter_inner(&it, 0);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 1)) {
    const double *pa = a->data + it.off[0];
    double *po = t->data + i;
    for (int64_t j = 0; j < len; j++) po[j] = pa[j * sa];
  }
  return t;
}

static Tensor *eval_reshape(Run *r, Node *n) {
  const Tensor *a = arg(r, n, 0);
  Tensor *t = run_alloc(r, n);
  memcpy(t->data, a->data, (size_t)tensor_numel(t) * sizeof(double));
  return t;
}

static Tensor *eval_slice(Run *r, Node *n) {
  const Tensor *a = arg(r, n, 0);
  int ax = n->axis;
  int64_t outer = dims_prod(&a->shape, 0, ax);
  int64_t inner = dims_prod(&a->shape, ax + 1, a->shape.rank);
  int64_t len = a->shape.d[ax].n, w = n->hi - n->lo;
  Tensor *t = run_alloc(r, n);
  for (int64_t o = 0; o < outer; o++)
    memcpy(t->data + o * w * inner, a->data + (o * len + n->lo) * inner,
           (size_t)(w * inner) * sizeof(double));
  return t;
}

static Tensor *eval_concat(Run *r, Node *n) {
  int ax = n->axis;
  Tensor *t = run_alloc(r, n);
  int64_t outer = dims_prod(&t->shape, 0, ax);
  int64_t inner = dims_prod(&t->shape, ax + 1, t->shape.rank);
  double *dst = t->data;
  for (int64_t o = 0; o < outer; o++) {
    for (int i = 0; i < n->nin; i++) {
      const Tensor *a = arg(r, n, i);
      int64_t chunk = a->shape.d[ax].n * inner;
      memcpy(dst, a->data + o * chunk, (size_t)chunk * sizeof(double));
      dst += chunk;
    }
  }
  return t;
}

/* take_along_axis(x, idx, axis) with the other axes broadcast: operand 0 of
   the iterator walks idx, operand 1 walks x with stride 0 along the axis;
   the index value times x's own axis stride selects the element. */
static Tensor *eval_gather(Run *r, Node *n) {
  const Tensor *x = arg(r, n, 0), *idx = arg(r, n, 1);
  Tensor *t = run_alloc(r, n);
  int ax = n->axis, xax = ax - (t->shape.rank - x->shape.rank);
  int64_t xst[TS_MAX_RANK], N = tensor_numel(t);
  int64_t size = x->shape.d[xax].n;
  row_strides(&x->shape, xst);
  Iter it;
  iter_init(&it, &t->shape);
  iter_bcast(&it, 0, &idx->shape, 1);
  iter_bcast(&it, 1, &x->shape, 1);
  it.st[1][ax] = 0;
  int64_t len = iter_len(&it), si = iter_inner(&it, 0), sx = iter_inner(&it, 1);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 2)) {
    const double *pi = idx->data + it.off[0], *px = x->data + it.off[1];
    for (int64_t j = 0; j < len; j++) {
      double v = pi[j * si];
      if (!(v >= 0 && v < (double)size) || v != floor(v))
        ts_error(r->ctx, n->site, "gather index %lld out of range [0, %lld)",
                 isnan(v) ? -1LL : (long long)v, (long long)size);
      t->data[i + j] = px[j * sx + (int64_t)v * xst[xax]];
    }
  }
  return t;
}

/* ---- dispatch ---- */

static Tensor *eval_node(Run *r, Node *n) {
  switch (n->op) {
  case OP_INPUT: return eval_input(r, n);
  case OP_CONST: return eval_const(r, n);
  case OP_IOTA: return eval_iota(r, n);
  case OP_NEG: return eval_unary(r, n, f_neg);
  case OP_EXP: return eval_unary(r, n, exp);
  case OP_LOG: return eval_unary(r, n, log);
  case OP_SQRT: return eval_unary(r, n, sqrt);
  case OP_RSQRT: return eval_unary(r, n, f_rsqrt);
  case OP_TANH: return eval_unary(r, n, tanh);
  case OP_ERF: return eval_unary(r, n, erf);
  case OP_SIGMOID: return eval_unary(r, n, f_sigmoid);
  case OP_RELU: return eval_unary(r, n, f_relu);
  case OP_ABS: return eval_unary(r, n, fabs);
  case OP_CAST: return eval_unary(r, n, f_id);
  case OP_ADD: return eval_binary(r, n, f_add);
  case OP_SUB: return eval_binary(r, n, f_sub);
  case OP_MUL: return eval_binary(r, n, f_mul);
  case OP_DIV: return eval_binary(r, n, f_div);
  case OP_IDIV: return eval_binary(r, n, idiv_euclid);
  case OP_POW: return eval_binary(r, n, pow);
  case OP_MAX: return eval_binary(r, n, f_max);
  case OP_MIN: return eval_binary(r, n, f_min);
  case OP_LT: return eval_binary(r, n, f_lt);
  case OP_LE: return eval_binary(r, n, f_le);
  case OP_GT: return eval_binary(r, n, f_gt);
  case OP_GE: return eval_binary(r, n, f_ge);
  case OP_EQ: return eval_binary(r, n, f_eq);
  case OP_NE: return eval_binary(r, n, f_ne);
  case OP_SELECT: return eval_select(r, n);
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN: return eval_reduce(r, n);
  case OP_MATMUL: return eval_matmul(r, n);
  case OP_PERMUTE: return eval_permute(r, n);
  case OP_RESHAPE: return eval_reshape(r, n);
  case OP_SLICE: return eval_slice(r, n);
  case OP_CONCAT: return eval_concat(r, n);
  case OP_GATHER: return eval_gather(r, n);
  case OP_COUNT: break;
  }
  ts_fatal(r->ctx, "interp: node %%%d has an unknown op %d", n->id, (int)n->op);
}

/* ---- the run ---- */

static Run *run_new(Graph *g, Tensor **inputs) {
  Run *r = calloc(1, sizeof *r);
  size_t nn = (size_t)(g->nnodes > 0 ? g->nnodes : 1);
  if (r) {
    r->g = g;
    r->ctx = g->ctx;
    r->inputs = inputs;
    r->val = calloc(nn, sizeof *r->val);
    r->uses = calloc(nn, sizeof *r->uses);
    r->live = calloc(nn, sizeof *r->live);
  }
  if (!r || !r->val || !r->uses || !r->live) {
    run_free(r);
    ts_fatal(g->ctx, "out of memory starting the interpreter");
  }
  return r;
}

/* Mark what the target depends on (a given value cuts the walk); count
   live uses of each node. */
static void run_liveness(Run *r) {
  Graph *g = r->g;
  r->live[r->target->id] = true;
  if (r->keep_roots)
    for (int i = 0; i < r->target->id; i++) r->live[i] |= r->keep[i];
  for (int i = r->target->id; i >= 0; i--) {
    Node *n = g->nodes[i];
    if (!r->live[i] || (r->given && r->given[i])) continue;
    for (int j = 0; j < n->nin; j++) {
      r->live[n->in[j]->id] = true;
      r->uses[n->in[j]->id]++;
    }
  }
}

/* Drop one use of each operand of n; free intermediates no longer needed. */
static void run_release(Run *r, const Node *n) {
  for (int j = 0; j < n->nin; j++) {
    const Node *a = n->in[j];
    if (--r->uses[a->id] > 0 || a == r->target || borrowed(r, a->id) || (r->keep && r->keep[a->id])) continue;
    tensor_free(r->val[a->id]);
    r->val[a->id] = NULL;
  }
}

/* A copy of a value the run does not own. */
static Tensor *run_copy(Run *r, const Node *n, const Tensor *t) {
  Tensor *c = alloc_checked(r->ctx, &t->shape, t->kind, n->site);
  memcpy(c->data, t->data, (size_t)tensor_numel(t) * sizeof(double));
  return c;
}

static Tensor *run_all(Run *r, Tensor **values) {
  Graph *g = r->g;
  char want[256], got[256];
  run_liveness(r);
  for (int i = 0; i <= r->target->id; i++) {
    Node *n = g->nodes[i];
    if (!r->live[i]) continue;
    if (r->given && r->given[i]) {
      if (!shape_equal(&r->given[i]->shape, &n->shape))
        ts_error(r->ctx, n->site, "the value given for node %%%d has shape %s, expected %s", i,
                 shape_str(&r->given[i]->shape, got, sizeof got), shape_str(&n->shape, want, sizeof want));
      r->val[i] = r->given[i];
      continue;
    }
    ts_step(r->ctx, n->pos);
    eval_node(r, n);
    run_release(r, n);
  }
  const Node *o = r->target;
  if (r->keep && values) {
    /* values[] is filled only on success: until then the run owns them (a
       copy that fails unwinds; run_guarded frees what values[] holds) */
    for (int i = 0; i < o->id; i++) {
      if (!r->keep[i] || !r->val[i]) continue;
      if (borrowed(r, i)) values[i] = run_copy(r, g->nodes[i], r->val[i]);
      else values[i] = r->val[i], r->val[i] = NULL;
    }
    if (r->keep[o->id]) values[o->id] = run_copy(r, o, r->val[o->id]);
  }
  Tensor *out = r->val[o->id];
  if (borrowed(r, o->id)) out = run_copy(r, o, out);
  else r->val[o->id] = NULL; /* detach last: the caller owns it */
  return out;
}

/* Runs r under a jmp_buf of its own; on an unwind, cleans up and passes it
   on to the caller's jmp_buf.  (With no caller's jmp_buf an error aborts in
   ts_error anyway, so then there is nothing to guard.) */
static Tensor *run_guarded(Run *r, Tensor **values) {
  Ctx *c = r->ctx;
  jmp_buf here;
  jmp_buf *volatile prev = c->unwind;
  Tensor *volatile out = NULL;
  if (!prev) {
    out = run_all(r, values);
    run_free(r);
    return out;
  }
  if (setjmp(here)) {
    c->unwind = prev;
    if (r->keep && values)
      for (int i = 0; i < r->g->nnodes; i++)
        if (r->keep[i]) tensor_free(values[i]), values[i] = NULL;
    tensor_free(out);
    run_free(r);
    longjmp(*prev, 1);
  }
  c->unwind = &here;
  out = run_all(r, values);
  c->unwind = prev;
  run_free(r);
  return out;
}

Tensor *interp_run(Graph *g, Tensor **inputs) {
  if (!g->output) ts_fatal(g->ctx, "interp: the graph has no output");
  Run *r = run_new(g, inputs);
  r->target = g->output;
  return run_guarded(r, NULL);
}

Tensor *interp_run_ex(Graph *g, Tensor **inputs, Tensor **given, const Node *target, const bool *keep,
                      Tensor **values) {
  if (!target) target = g->output;
  if (!target) ts_fatal(g->ctx, "interp: the graph has no output");
  if (keep && values)
    for (int i = 0; i < g->nnodes; i++)
      if (keep[i]) values[i] = NULL;
  Run *r = run_new(g, inputs);
  r->target = target;
  r->given = given;
  r->keep = keep;
  return run_guarded(r, values);
}

void interp_run_many(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out) {
  const Node *volatile last = NULL;
  bool *volatile keep = calloc((size_t)g->nnodes + 1, sizeof *keep);
  Tensor **volatile values = calloc((size_t)g->nnodes + 1, sizeof *values);
  if (!keep || !values) {
    free(keep);
    free(values);
    ts_fatal(g->ctx, "out of memory starting the interpreter");
  }
  for (int i = 0; i < n; i++) {
    keep[targets[i]->id] = true;
    if (!last || targets[i]->id > last->id) last = targets[i];
  }
  Run *r = run_new(g, inputs);
  r->target = last;
  r->keep = keep;
  r->keep_roots = true;
  jmp_buf here;
  jmp_buf *volatile prev = g->ctx->unwind;
  if (prev && setjmp(here)) { /* run_guarded has freed the run and what values held */
    g->ctx->unwind = prev;
    free(keep);
    free(values);
    longjmp(*prev, 1);
  }
  if (prev) g->ctx->unwind = &here;
  Tensor *t = run_guarded(r, values);
  g->ctx->unwind = prev;
  tensor_free(values[last->id]); /* run_all's copy of the target: t is it */
  values[last->id] = t;
  for (int i = 0; i < n; i++) {
    Tensor *v = values[targets[i]->id];
    bool first = true; /* a node asked for twice: a copy for the second */
    for (int j = 0; j < i; j++) first &= targets[j] != targets[i];
    if (first) {
      out[i] = v;
    } else {
      out[i] = tensor_new(&v->shape, v->kind);
      if (out[i]) memcpy(out[i]->data, v->data, (size_t)shape_numel(&v->shape) * sizeof(double));
    }
  }
  free(keep);
  free(values);
}

/* ---- random inputs ---- */

/* Input i draws from its own generator, seeded with seed*1000003 + i, so a
   given input's values do not depend on which other inputs were supplied. */
static void fill_input(const Graph *g, const Node *in, Tensor *t, uint64_t seed, bool unit_weights) {
  Rng rng;
  rng_seed(&rng, seed * 1000003u + (uint64_t)in->input_index);
  int64_t N = tensor_numel(t);
  bool index = in->role == ROLE_INDEX || in->kind == EK_INT;
  int64_t bound = in->kind == EK_BOOL ? 2 : index ? ir_index_bound(g, in) : 0, fan_in = unit_weights ? 0 : ir_fan_in(g, in);
  double sd = fan_in > 0 ? 1 / sqrt((double)fan_in) : 1;
  for (int64_t i = 0; i < N; i++) {
    if (in->kind == EK_REAL && !index)
      t->data[i] = sd * rng_normal(&rng);
    else
      t->data[i] = bound > 0 ? (double)rng_below(&rng, bound) : 0.0;
  }
}

void interp_random_inputs(Graph *g, Tensor **inputs, uint64_t seed, bool unit_weights) {
  for (int i = 0; i < g->ninputs; i++) {
    if (inputs[i]) continue;
    const Node *in = g->inputs[i];
    inputs[i] = alloc_checked(g->ctx, &in->shape, in->kind, in->site);
    fill_input(g, in, inputs[i], seed, unit_weights);
  }
}
