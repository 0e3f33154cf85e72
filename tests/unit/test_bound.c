/* test_bound.c: the error bounds of interp_bound (src/interp/bound.c).
 *
 * For every op, the graph is evaluated in float32 by hand (each op's
 * result rounded to float32, as the tile interpreter does, operands
 * carrying their own float32 error) and compared with the float64 value:
 * the actual error must be within the bound, and the bound within 1e3 of
 * the actual error summed over well-conditioned inputs (so it is not
 * vacuous).  Then the properties verify relies on: exp turns an operand
 * error into that much relative error; a sum of cancelling terms is
 * bounded by n*u*sum|terms|, not by its result; exact infinities (mask
 * constants) keep a zero bound through exp and max; singular points give
 * an infinite bound; layout ops move bounds with values; given values are
 * exact; an unwind frees everything (ASan). */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/interp/interp.h"
#include "unit.h"

#define U32 0x1p-24

typedef struct BEnv {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Graph *g;
  double *u, *uacc;
} BEnv;

static void benv_init(BEnv *e) {
  e->a = arena_new();
  ctx_init(&e->c, e->a, stderr);
  e->c.unwind = &e->jb;
  e->g = graph_new(&e->c);
  e->u = e->uacc = NULL;
}

static void benv_free(BEnv *e) {
  free(e->u);
  free(e->uacc);
  arena_free(e->a);
}

static Shape shp(int rank, const int64_t *d) {
  Shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.d[i].n = d[i];
  return s;
}
#define SHAPE(...) shp((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static const Pos P0 = {0};

static Node *input(BEnv *e, const char *name, Shape s) { return ir_input(e->g, name, ROLE_TENSOR, &s, P0); }

static Tensor *tensor_with(Shape s, const double *v) {
  Tensor *t = tensor_new(&s, EK_REAL);
  memcpy(t->data, v, sizeof(double) * (size_t)shape_numel(&s));
  return t;
}

/* Every node but the inputs rounds to float32 and accumulates in float32. */
static void all_float32(BEnv *e) {
  int n = e->g->nnodes;
  free(e->u);
  free(e->uacc);
  e->u = calloc((size_t)n, sizeof *e->u);
  e->uacc = calloc((size_t)n, sizeof *e->uacc);
  for (int i = 0; i < n; i++)
    if (e->g->nodes[i]->op != OP_INPUT) e->u[i] = e->uacc[i] = U32;
}

/* The value of `target` (returned) and its bound (*b); NULL on an unwind. */
static Tensor *bounded(BEnv *e, const Node *target, Tensor **inputs, Tensor **given, Tensor **b) {
  *b = NULL;
  if (setjmp(e->jb)) return NULL;
  return interp_bound(e->g, inputs, given, target, e->u, e->uacc, b);
}

static double f32(double v) { return (double)(float)v; }

/* Checks the float32 values got against the float64 values v with bounds b:
   every actual error within its bound, and the bounds' sum at most `loose`
   times the actual errors' sum (when that is not zero).  Returns the ratio. */
static double check_bound(const char *what, const double *got, const Tensor *v, const Tensor *b, double loose) {
  int64_t n = shape_numel(&v->shape);
  double sa = 0, sb = 0;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double actual = fabs(got[i] - v->data[i]);
    if (!(actual <= b->data[i])) {
      if (!bad++) fprintf(stderr, "  %s[%lld]: float32 %.17g, float64 %.17g, error %.3g over its bound %.3g\n", what,
                          (long long)i, got[i], v->data[i], actual, b->data[i]);
    }
    sa += actual;
    sb += b->data[i];
  }
  CHECK(bad == 0);
  double ratio = sa > 0 ? sb / sa : 0;
  if (loose > 0) {
    CHECK(sa > 0);
    CHECK(ratio <= loose);
    if (!(ratio <= loose) || getenv("BOUND_SHOW")) fprintf(stderr, "  %s: bound / actual error = %.3g\n", what, ratio);
  }
  return ratio;
}

/* A deterministic spread of n values over [lo, hi]. */
static void spread(double *x, int n, double lo, double hi, unsigned seed) {
  Rng r;
  rng_seed(&r, seed);
  for (int i = 0; i < n; i++) x[i] = lo + (hi - lo) * rng_uniform(&r);
}

/* ---- elementwise, one operand ---- */

static double sigmoid(double x) { return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)); }
static double rsqrt(double x) { return 1 / sqrt(x); }
static double relu(double x) { return x > 0 ? x : 0; }
static double neg(double x) { return -x; }

TEST(bound_unary_ops_against_float32) {
  static const struct { Op op; double (*f)(double); double lo, hi; } cases[] = {
      {OP_EXP, exp, -10, 10},     {OP_LOG, log, 0.01, 100},    {OP_SQRT, sqrt, 0.01, 100},
      {OP_RSQRT, rsqrt, 0.01, 100}, {OP_TANH, tanh, -4, 4},   {OP_ERF, erf, -3, 3},
      {OP_SIGMOID, sigmoid, -12, 12}, {OP_RELU, relu, -5, 5}, {OP_ABS, fabs, -5, 5},
      {OP_NEG, neg, -5, 5},
  };
  enum { N = 512 };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    BEnv e;
    benv_init(&e);
    double x[N], got[N];
    spread(x, N, cases[k].lo / 0.1, cases[k].hi / 0.1, (unsigned)k + 1);
    Node *in = input(&e, "x", SHAPE(N));
    Node *c = ir_const(e.g, 0.1, P0);
    Node *a = ir_binary(e.g, OP_MUL, in, c, P0); /* an operand with a float32 error of its own */
    Node *r = ir_unary(e.g, cases[k].op, a, P0);
    all_float32(&e);
    Tensor *t = tensor_with(SHAPE(N), x), *b;
    Tensor *v = bounded(&e, r, &t, NULL, &b);
    REQUIRE(v && b);
    for (int i = 0; i < N; i++) got[i] = f32(cases[k].f(f32(x[i] * f32(0.1))));
    check_bound(op_info[cases[k].op].name, got, v, b, 1e3);
    tensor_free(v);
    tensor_free(b);
    tensor_free(t);
    benv_free(&e);
  }
}

TEST(bound_cast_of_an_integer_is_exact) {
  BEnv e;
  benv_init(&e);
  Shape s = SHAPE(4);
  Node *i = ir_input(e.g, "i", ROLE_INDEX, &s, P0);
  Node *r = ir_unary(e.g, OP_CAST, i, P0);
  all_float32(&e);
  Tensor *t = tensor_new(&s, EK_INT), *b;
  for (int k = 0; k < 4; k++) t->data[k] = k * 1000 + 3;
  Tensor *v = bounded(&e, r, &t, NULL, &b);
  REQUIRE(v && b);
  for (int k = 0; k < 4; k++) CHECK(b->data[k] == 0); /* integers below 2^24 fit float32 */
  tensor_free(v);
  tensor_free(b);
  tensor_free(t);
  benv_free(&e);
}

/* ---- elementwise, two operands ---- */

static double add(double a, double b) { return a + b; }
static double sub(double a, double b) { return a - b; }
static double mul(double a, double b) { return a * b; }
static double dv(double a, double b) { return a / b; }
static double mx(double a, double b) { return a >= b ? a : b; }
static double mn(double a, double b) { return a <= b ? a : b; }

TEST(bound_binary_ops_against_float32) {
  static const struct { Op op; double (*f)(double, double); double alo, ahi, blo, bhi; } cases[] = {
      {OP_ADD, add, -5, 5, -5, 5},   {OP_SUB, sub, -5, 5, -5, 5}, {OP_MUL, mul, -5, 5, -5, 5},
      {OP_DIV, dv, -5, 5, 0.5, 5},   {OP_POW, pow, 0.2, 5, -3, 3}, {OP_MAX, mx, -5, 5, -5, 5},
      {OP_MIN, mn, -5, 5, -5, 5},
  };
  enum { N = 512 };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    BEnv e;
    benv_init(&e);
    double x[N], y[N], got[N];
    spread(x, N, cases[k].alo / 0.1, cases[k].ahi / 0.1, (unsigned)k + 11);
    spread(y, N, cases[k].blo / 0.3, cases[k].bhi / 0.3, (unsigned)k + 31);
    Node *ix = input(&e, "x", SHAPE(N)), *iy = input(&e, "y", SHAPE(N));
    Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
    Node *b = ir_binary(e.g, OP_MUL, iy, ir_const(e.g, 0.3, P0), P0);
    Node *r = ir_binary(e.g, cases[k].op, a, b, P0);
    all_float32(&e);
    Tensor *ins[2] = {tensor_with(SHAPE(N), x), tensor_with(SHAPE(N), y)}, *bd;
    Tensor *v = bounded(&e, r, ins, NULL, &bd);
    REQUIRE(v && bd);
    for (int i = 0; i < N; i++) got[i] = f32(cases[k].f(f32(x[i] * f32(0.1)), f32(y[i] * f32(0.3))));
    check_bound(op_info[cases[k].op].name, got, v, bd, 1e3);
    tensor_free(v);
    tensor_free(bd);
    tensor_free(ins[0]);
    tensor_free(ins[1]);
    benv_free(&e);
  }
}

TEST(bound_compare_that_may_flip_widens_select) {
  /* r = select(a > b, a, b) with a, b carrying float32 error: where a and b
     are within INTERP_BOUND_C times their errors the comparison may flip
     (bound 1: a faithfully rounded operation may err by twice the bound)
     and r may be either branch; elsewhere r has its branch's bound.  Some
     pairs lie between once and twice the bounds apart (band). */
  enum { N = 256 };
  BEnv e;
  benv_init(&e);
  double x[N], y[N], got[N];
  spread(x, N, -10, 10, 5);
  for (int i = 0; i < N; i++)
    y[i] = i % 4 == 0 ? x[i] * (1 + 1e-9) : i % 4 == 1 ? x[i] : i % 4 == 2 ? x[i] * (1 + 2.5e-7) : -x[i] + 1;
  Node *ix = input(&e, "x", SHAPE(N)), *iy = input(&e, "y", SHAPE(N));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *b = ir_binary(e.g, OP_MUL, iy, ir_const(e.g, 0.1, P0), P0);
  Node *gt = ir_binary(e.g, OP_GT, a, b, P0);
  Node *r = ir_select(e.g, gt, a, b, P0);
  all_float32(&e);
  Tensor *ins[2] = {tensor_with(SHAPE(N), x), tensor_with(SHAPE(N), y)}, *bc, *br, *ba, *bb;
  Tensor *vc = bounded(&e, gt, ins, NULL, &bc), *vr = bounded(&e, r, ins, NULL, &br);
  Tensor *va = bounded(&e, a, ins, NULL, &ba), *vb = bounded(&e, b, ins, NULL, &bb);
  REQUIRE(vc && vr && va && vb);
  int flips = 0, band = 0;
  for (int i = 0; i < N; i++) {
    double a32 = f32(x[i] * f32(0.1)), b32 = f32(y[i] * f32(0.1));
    got[i] = a32 > b32 ? a32 : b32;
    double d = fabs(va->data[i] - vb->data[i]);
    bool near = d <= INTERP_BOUND_C * (ba->data[i] + bb->data[i]);
    band += near && d > ba->data[i] + bb->data[i];
    CHECK(bc->data[i] == (near ? 1 : 0));
    flips += near;
    if (near) CHECK(br->data[i] >= fabs(va->data[i] - vb->data[i]));
    else CHECK(br->data[i] == (vc->data[i] != 0 ? ba->data[i] : bb->data[i]) + U32 * fabs(vr->data[i]) ||
               br->data[i] == (vc->data[i] != 0 ? ba->data[i] : bb->data[i]));
  }
  CHECK(flips >= N / 4 && flips < N);
  CHECK(band > 0);
  check_bound("select", got, vr, br, 0);
  Tensor *all[] = {vc, bc, vr, br, va, ba, vb, bb, ins[0], ins[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

/* ---- reductions and products ---- */

TEST(bound_sum_and_amax_against_float32) {
  enum { R = 4, K = 64 };
  BEnv e;
  benv_init(&e);
  double x[R * K], got[R], gotm[R];
  spread(x, R * K, -20, 20, 9);
  Node *ix = input(&e, "x", SHAPE(R, K));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *s = ir_reduce(e.g, OP_SUM, a, 1, P0), *m = ir_reduce(e.g, OP_AMAX, a, 1, P0);
  all_float32(&e);
  e.u[m->id] = 0; /* the max of float32 values is one of them */
  Tensor *t = tensor_with(SHAPE(R, K), x), *bs, *bm, *ba;
  Tensor *vs = bounded(&e, s, &t, NULL, &bs), *vm = bounded(&e, m, &t, NULL, &bm), *va = bounded(&e, a, &t, NULL, &ba);
  REQUIRE(vs && vm && va);
  for (int r = 0; r < R; r++) {
    double acc = 0, best = -INFINITY, emax = 0, top = -INFINITY, bot = -INFINITY;
    for (int k = 0; k < K; k++) {
      double t32 = f32(x[r * K + k] * f32(0.1)), v = va->data[r * K + k], ek = ba->data[r * K + k];
      acc = f32(acc + t32); /* float32 accumulation, one term at a time */
      best = t32 > best ? t32 : best;
      emax = fmax(emax, ek);
      top = fmax(top, v + ek), bot = fmax(bot, v - ek);
    }
    got[r] = acc;
    gotm[r] = best;
    /* the computed max lies in [max (t - e), max (t + e)]: that interval's
       reach from the value, never more than the largest operand bound */
    double reach = fmax(top - vm->data[r], vm->data[r] - bot);
    CHECK(bm->data[r] == fmin(reach, emax));
    CHECK(bm->data[r] <= emax);
  }
  check_bound("sum", got, vs, bs, 1e3);
  check_bound("amax", gotm, vm, bm, 0);
  Tensor *all[] = {vs, bs, vm, bm, va, ba, t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

/* A masked score (-1e9 added in float32: an error of 32) beside O(1)
   scores does not widen the row's maximum: its bound is that of the
   values that can reach the maximum. */
TEST(bound_amax_ignores_terms_that_cannot_reach_it) {
  enum { K = 8 };
  BEnv e;
  benv_init(&e);
  double x[K] = {0.5, -1.25, 2.0, 1.75, -3.0, 0.25, 1.0, -0.5}, mk[K] = {0, 0, 0, 0, -1e9, -1e9, 0, 0};
  Node *ix = input(&e, "x", SHAPE(1, K)), *im = input(&e, "m", SHAPE(1, K));
  Node *a = ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0), im, P0);
  Node *m = ir_reduce(e.g, OP_AMAX, a, 1, P0);
  all_float32(&e);
  Tensor *ins[2] = {tensor_with(SHAPE(1, K), x), tensor_with(SHAPE(1, K), mk)}, *bm, *ba;
  Tensor *vm = bounded(&e, m, ins, NULL, &bm), *va = bounded(&e, a, ins, NULL, &ba);
  REQUIRE(vm && va);
  CHECK(ba->data[4] > 1); /* -1e9 + x in float32: an error of tens */
  CHECK(bm->data[0] < 1e-5); /* the maximum, 0.2 + 0 from x[2]: float32's error of it */
  double got = -INFINITY;
  for (int k = 0; k < K; k++) got = fmax(got, f32(f32(x[k] * f32(0.1)) + mk[k]));
  check_bound("amax", &got, vm, bm, 0);
  Tensor *all[] = {vm, bm, va, ba, ins[0], ins[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

TEST(bound_cancelling_sum_follows_its_terms) {
  /* exact terms +-1000 s that cancel but for 0.5 s: the bound is
     n * uacc * sum|terms|, proportional to the terms, far above |sum| */
  enum { K = 101 };
  double bound[2], value[2];
  for (int sc = 0; sc < 2; sc++) {
    BEnv e;
    benv_init(&e);
    double x[K], s = sc ? 2 : 1, abs_sum = 0;
    for (int k = 0; k < K - 1; k++) x[k] = (k % 2 ? -1000 : 1000) * s;
    x[K - 1] = 0.5 * s;
    for (int k = 0; k < K; k++) abs_sum += fabs(x[k]);
    Node *ix = input(&e, "x", SHAPE(1, K));
    Node *sum = ir_reduce(e.g, OP_SUM, ix, 1, P0);
    all_float32(&e);
    e.u[sum->id] = 0; /* only the accumulation rounds */
    Tensor *t = tensor_with(SHAPE(1, K), x), *b;
    Tensor *v = bounded(&e, sum, &t, NULL, &b);
    REQUIRE(v && b);
    CHECK_NEAR(b->data[0], K * U32 * abs_sum, 1e-12 * K * U32 * abs_sum);
    CHECK(b->data[0] > 100 * fabs(v->data[0]) * U32);
    bound[sc] = b->data[0];
    value[sc] = v->data[0];
    tensor_free(v);
    tensor_free(b);
    tensor_free(t);
    benv_free(&e);
  }
  CHECK(value[0] == 0.5 && value[1] == 1);
  CHECK_NEAR(bound[1] / bound[0], 2, 1e-12);
}

TEST(bound_matmul_against_float32) {
  enum { M = 5, K = 48, N = 3 };
  BEnv e;
  benv_init(&e);
  double x[M * K], y[K * N], got[M * N];
  spread(x, M * K, -30, 30, 21);
  spread(y, K * N, -10, 10, 22);
  Node *ix = input(&e, "x", SHAPE(M, K)), *iy = input(&e, "y", SHAPE(K, N));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *b = ir_binary(e.g, OP_MUL, iy, ir_const(e.g, 0.3, P0), P0);
  Node *r = ir_matmul(e.g, a, b, P0);
  all_float32(&e);
  Tensor *ins[2] = {tensor_with(SHAPE(M, K), x), tensor_with(SHAPE(K, N), y)}, *bd;
  Tensor *v = bounded(&e, r, ins, NULL, &bd);
  REQUIRE(v && bd);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc = f32(acc + f32(f32(x[i * K + k] * f32(0.1)) * f32(y[k * N + j] * f32(0.3))));
      got[i * N + j] = acc;
    }
  check_bound("matmul", got, v, bd, 1e3);
  tensor_free(v);
  tensor_free(bd);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  benv_free(&e);
}

TEST(bound_matmul_of_a_node_with_itself) {
  /* a ⬝ a names one node in both operand slots */
  enum { K = 24 };
  BEnv e;
  benv_init(&e);
  double x[K * K], got[K * K];
  spread(x, K * K, -10, 10, 23);
  Node *ix = input(&e, "x", SHAPE(K, K));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *r = ir_matmul(e.g, a, a, P0);
  all_float32(&e);
  Tensor *t = tensor_with(SHAPE(K, K), x), *bd;
  Tensor *v = bounded(&e, r, &t, NULL, &bd);
  REQUIRE(v && bd);
  for (int i = 0; i < K; i++)
    for (int j = 0; j < K; j++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc = f32(acc + f32(f32(x[i * K + k] * f32(0.1)) * f32(x[k * K + j] * f32(0.1))));
      got[i * K + j] = acc;
    }
  check_bound("a.a", got, v, bd, 1e3);
  tensor_free(v);
  tensor_free(bd);
  tensor_free(t);
  benv_free(&e);
}

/* ---- conditioning ---- */

TEST(bound_exp_turns_operand_error_into_relative_error) {
  /* softmax of large logits: exp(a) with |a| ~ 50..90 and a float32 error
     e_a ~ |a| 2^-24 has relative error e_a, not 2^-24 */
  enum { N = 4 };
  BEnv e;
  benv_init(&e);
  double x[N] = {500, 600, 700, 800};
  Node *ix = input(&e, "x", SHAPE(N));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.11, P0), P0);
  Node *r = ir_unary(e.g, OP_EXP, a, P0);
  all_float32(&e);
  Tensor *t = tensor_with(SHAPE(N), x), *ba, *br;
  Tensor *va = bounded(&e, a, &t, NULL, &ba), *vr = bounded(&e, r, &t, NULL, &br);
  REQUIRE(va && vr);
  for (int i = 0; i < N; i++) {
    double rel = br->data[i] / vr->data[i];
    CHECK(ba->data[i] > 50 * U32);
    CHECK(rel >= ba->data[i] && rel <= ba->data[i] * (1 + 1e-3) + U32);
  }
  Tensor *all[] = {va, ba, vr, br, t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

/* exp(x * c - m) where x * c is huge and m its float32 value (a row max a
   kernel stored): the float64 difference is about -5.6e5 (exp underflows
   to 0) while float32 computes exp(0) = 1.  The bound must admit that 1
   (it once settled to 0: a finite relative bound at an underflowed 0 said
   the computed value was exactly 0), and the constant c, a float32
   literal in the kernel, must be charged its rounding. */
TEST(bound_exp_that_underflows_admits_the_float32_value) {
  BEnv e;
  benv_init(&e);
  double c = 1 / sqrt(8.0), x = 50000000188416.0; /* a float32 number */
  double m = f32(f32(x) * f32(c));
  Node *ix = input(&e, "x", SHAPE(1)), *im = input(&e, "m", SHAPE(1));
  Node *d = ir_binary(e.g, OP_SUB, ir_binary(e.g, OP_MUL, ix, ir_const(e.g, c, P0), P0), im, P0);
  Node *r = ir_unary(e.g, OP_EXP, d, P0);
  all_float32(&e);
  Tensor *ins[2] = {tensor_with(SHAPE(1), &x), tensor_with(SHAPE(1), &m)}, *b;
  Tensor *v = bounded(&e, r, ins, NULL, &b);
  REQUIRE(v);
  double got = exp(f32(f32(x * f32(c)) - m)); /* the kernel's value: 1 */
  CHECK(got == 1 && v->data[0] == 0);
  CHECK(fabs(got - v->data[0]) <= b->data[0]);
  Tensor *all[] = {v, b, ins[0], ins[1]};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

/* A value that underflows into float32's subnormals and is then scaled
   up: exp(a) for a near -95 keeps about 20 of its 24 bits, each rounding
   off by up to half the subnormal spacing (2^-150), and the product by
   1e4 turns that into an error far beyond u·|v| of the (normal) result.
   The bound carries it (it used to charge u·|v| alone: a correct kernel
   failed verify --grad by 200 subnormal units). */
TEST(bound_underflow_scaled_back_up) {
  enum { N = 64 };
  BEnv e;
  benv_init(&e);
  double a[N];
  spread(a, N, -100, -90, 7);
  for (int i = 0; i < N; i++) a[i] = f32(a[i]);
  Node *ia = input(&e, "a", SHAPE(N));
  Node *r = ir_binary(e.g, OP_MUL, ir_unary(e.g, OP_EXP, ia, P0), ir_const(e.g, 1e4, P0), P0);
  all_float32(&e);
  Tensor *t = tensor_with(SHAPE(N), a), *b;
  Tensor *v = bounded(&e, r, &t, NULL, &b);
  REQUIRE(v);
  double got[N];
  int beyond = 0;
  for (int i = 0; i < N; i++) {
    got[i] = f32(f32(exp(a[i])) * f32(1e4));
    beyond += fabs(got[i] - v->data[i]) > 4 * 0x1p-24 * fabs(v->data[i]); /* what u·|v| alone admits */
  }
  CHECK(beyond > 0); /* the case is one where underflow matters */
  check_bound("exp(a) * 1e4", got, v, b, 0);
  Tensor *all[] = {v, b, t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
  /* an exact product whose 21 bits fit float32's significand but not the
     9 a subnormal at 2^-140 keeps: a · a for a = (1 + 2^-10) 2^-70 */
  benv_init(&e);
  double x = ldexp(1 + ldexp(1, -10), -70);
  Node *ix = input(&e, "x", SHAPE(1));
  Node *sq = ir_binary(e.g, OP_MUL, ir_binary(e.g, OP_MUL, ix, ix, P0), ir_const(e.g, 1e30, P0), P0);
  all_float32(&e);
  Tensor *tx = tensor_with(SHAPE(1), &x), *bx;
  Tensor *vx = bounded(&e, sq, &tx, NULL, &bx);
  REQUIRE(vx);
  double g2 = f32(f32(f32(x) * f32(x)) * f32(1e30));
  CHECK(fabs(g2 - vx->data[0]) > 4 * 0x1p-24 * fabs(vx->data[0]));
  check_bound("a * a * 1e30", &g2, vx, bx, 0);
  tensor_free(vx), tensor_free(bx), tensor_free(tx);
  benv_free(&e);
}

TEST(bound_exact_infinities_stay_exact) {
  /* a causal-style mask: m = select(x > 0, x 0.1, -inf), then the softmax
     steps: the masked elements are -inf with bound 0 (certain), so
     exp(m - amax m) is 0 there with bound 0 and the max has a finite bound */
  enum { N = 8 };
  BEnv e;
  benv_init(&e);
  double x[N] = {3, -1, 5, -2, 7, -3, 1, -4};
  Node *ix = input(&e, "x", SHAPE(1, N));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *keep = ir_binary(e.g, OP_GT, ix, ir_const(e.g, 0, P0), P0);
  Node *m = ir_select(e.g, keep, a, ir_const(e.g, -INFINITY, P0), P0);
  Node *mx = ir_reduce(e.g, OP_AMAX, m, 1, P0);
  Node *p = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_SUB, m, mx, P0), P0);
  Node *s = ir_reduce(e.g, OP_SUM, p, 1, P0);
  all_float32(&e);
  Tensor *t = tensor_with(SHAPE(1, N), x), *bm, *bmx, *bp, *bs;
  Tensor *vm = bounded(&e, m, &t, NULL, &bm), *vmx = bounded(&e, mx, &t, NULL, &bmx);
  Tensor *vp = bounded(&e, p, &t, NULL, &bp), *vs = bounded(&e, s, &t, NULL, &bs);
  REQUIRE(vm && vmx && vp && vs);
  for (int i = 0; i < N; i++) {
    if (x[i] > 0) {
      CHECK(isfinite(bm->data[i]) && bm->data[i] > 0);
      CHECK(isfinite(bp->data[i]));
    } else {
      CHECK(vm->data[i] == -INFINITY && bm->data[i] == 0);
      CHECK(vp->data[i] == 0 && bp->data[i] == 0);
    }
  }
  CHECK(isfinite(bmx->data[0]) && bmx->data[0] > 0);
  CHECK(isfinite(bs->data[0]) && bs->data[0] < 1e-5 * vs->data[0]);
  Tensor *all[] = {vm, bm, vmx, bmx, vp, bp, vs, bs, t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

TEST(bound_singular_points_are_infinite) {
  /* d = 0.1 x - 0.1 y with x, y nearly equal: |d| below its own error, so
     log d, sqrt d, rsqrt d and 1/d cannot be bounded; where x and y are far
     apart the same ops have finite bounds */
  enum { N = 2 };
  BEnv e;
  benv_init(&e);
  double x[N] = {1, 1}, y[N] = {1 - 0x1p-27, 0.5};
  Node *ix = input(&e, "x", SHAPE(N)), *iy = input(&e, "y", SHAPE(N));
  Node *c = ir_const(e.g, 0.1, P0);
  Node *d = ir_binary(e.g, OP_SUB, ir_binary(e.g, OP_MUL, ix, c, P0), ir_binary(e.g, OP_MUL, iy, c, P0), P0);
  Node *rs[4] = {ir_unary(e.g, OP_LOG, d, P0), ir_unary(e.g, OP_SQRT, d, P0), ir_unary(e.g, OP_RSQRT, d, P0),
                 ir_binary(e.g, OP_DIV, ir_const(e.g, 1, P0), d, P0)};
  all_float32(&e);
  Tensor *ins[2] = {tensor_with(SHAPE(N), x), tensor_with(SHAPE(N), y)}, *bd;
  Tensor *vd = bounded(&e, d, ins, NULL, &bd);
  REQUIRE(vd && vd->data[0] > 0 && vd->data[0] < bd->data[0]);
  for (int k = 0; k < 4; k++) {
    Tensor *b, *v = bounded(&e, rs[k], ins, NULL, &b);
    REQUIRE(v && b);
    CHECK(isinf(b->data[0]));
    CHECK(isfinite(b->data[1]) && b->data[1] < 1e-5 * fabs(v->data[1]));
    tensor_free(v);
    tensor_free(b);
  }
  tensor_free(vd);
  tensor_free(bd);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  benv_free(&e);
}

/* ---- layout, given values, unwinding ---- */

TEST(bound_layout_ops_move_bounds_with_values) {
  enum { R = 3, C = 4 };
  BEnv e;
  benv_init(&e);
  double x[R * C];
  spread(x, R * C, -30, 30, 41);
  Shape is = SHAPE(R, 2);
  Node *ix = input(&e, "x", SHAPE(R, C)), *idx = ir_input(e.g, "i", ROLE_INDEX, &is, P0);
  Node *t = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0), P0);
  int perm[2] = {1, 0};
  Node *pt = ir_permute(e.g, t, perm, 2, P0);
  Node *sl = ir_slice(e.g, t, 1, 1, 3, P0);
  Node *parts[2] = {t, sl};
  Node *cc = ir_concat(e.g, parts, 2, 1, P0);
  Node *ga = ir_gather(e.g, t, idx, 1, P0);
  all_float32(&e);
  e.u[pt->id] = e.u[sl->id] = e.u[cc->id] = e.u[ga->id] = 0; /* moved, not rounded again */
  Tensor *ii = tensor_new(&is, EK_INT);
  for (int k = 0; k < R * 2; k++) ii->data[k] = (k * 3) % C;
  Tensor *ins[2] = {tensor_with(SHAPE(R, C), x), ii}, *bt, *bp, *bs, *bc, *bg;
  Tensor *vt = bounded(&e, t, ins, NULL, &bt), *vp = bounded(&e, pt, ins, NULL, &bp);
  Tensor *vs = bounded(&e, sl, ins, NULL, &bs), *vc = bounded(&e, cc, ins, NULL, &bc);
  Tensor *vg = bounded(&e, ga, ins, NULL, &bg);
  REQUIRE(vt && vp && vs && vc && vg);
  for (int r = 0; r < R; r++) {
    for (int c = 0; c < C; c++) {
      CHECK(bt->data[r * C + c] > 0);
      CHECK(bp->data[c * R + r] == bt->data[r * C + c]);
      CHECK(bc->data[r * (C + 2) + c] == bt->data[r * C + c]);
    }
    for (int c = 0; c < 2; c++) {
      CHECK(bs->data[r * 2 + c] == bt->data[r * C + 1 + c]);
      CHECK(bc->data[r * (C + 2) + C + c] == bt->data[r * C + 1 + c]);
      CHECK(bg->data[r * 2 + c] == bt->data[r * C + (int)ii->data[r * 2 + c]]);
    }
  }
  Tensor *all[] = {vt, bt, vp, bp, vs, bs, vc, bc, vg, bg, ins[0], ii};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}

TEST(bound_given_values_are_exact) {
  /* r = exp(a) with a given: only exp's own rounding remains */
  enum { N = 3 };
  BEnv e;
  benv_init(&e);
  double x[N] = {10, 20, 30};
  Node *ix = input(&e, "x", SHAPE(N));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *r = ir_unary(e.g, OP_EXP, a, P0);
  all_float32(&e);
  Tensor *t = tensor_with(SHAPE(N), x), *av = tensor_with(SHAPE(N), (double[]){1, 2, 3}), *b;
  Tensor **given = calloc((size_t)e.g->nnodes, sizeof *given);
  given[a->id] = av;
  Tensor *v = bounded(&e, r, &t, given, &b);
  REQUIRE(v && b);
  for (int i = 0; i < N; i++) {
    CHECK(v->data[i] == exp(i + 1.0));
    CHECK(b->data[i] == U32 * v->data[i]);
  }
  free(given);
  tensor_free(v);
  tensor_free(b);
  tensor_free(t);
  tensor_free(av);
  benv_free(&e);
}

TEST(bound_unwinds_cleanly) {
  /* a tensor over the interpreter's limit unwinds through interp_bound with
     nothing leaked (checked under ASan) */
  BEnv e;
  benv_init(&e);
  Node *ix = input(&e, "x", SHAPE(64));
  Node *r = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0), P0);
  all_float32(&e);
  double x[64] = {0};
  Tensor *t = tensor_with(SHAPE(64), x), *b = NULL;
  e.c.max_elems = 10;
  e.c.err = NULL;
  Tensor *v = bounded(&e, r, &t, NULL, &b);
  CHECK(v == NULL);
  CHECK(e.c.unwind == &e.jb);
  tensor_free(t);
  benv_free(&e);
}

/* v rounded to a p-bit significand (bfloat16: 8), as a tile of that type would. */
static double round_bits(double v, int p) {
  int ex;
  double m = frexp(v, &ex);
  return ldexp(nearbyint(ldexp(m, p)), ex - p);
}

TEST(bound_relative_bounds_carry_softmax) {
  /* logits a = 0.1 x rounded to 8 bits with |a| ~ 300: errors of ~1, so
     exp(a - max) is off by a factor up to e^2 and l = sum exp(a - max)
     by as much: its absolute interval reaches 0, yet P / l and log l are
     bounded through relative bounds (P/l within e^(r_P + r_l), log l within
     r_l), and the bounds hold for the evaluation rounded that way */
  enum { R = 3, K = 16 };
  BEnv e;
  benv_init(&e);
  double x[R * K];
  spread(x, R * K, -3000, 3000, 51);
  Node *ix = input(&e, "x", SHAPE(R, K));
  Node *a = ir_binary(e.g, OP_MUL, ix, ir_const(e.g, 0.1, P0), P0);
  Node *m = ir_reduce(e.g, OP_AMAX, a, 1, P0);
  Node *p = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_SUB, a, m, P0), P0);
  Node *l = ir_reduce(e.g, OP_SUM, p, 1, P0);
  Node *sm = ir_binary(e.g, OP_DIV, p, l, P0), *lse = ir_unary(e.g, OP_LOG, l, P0);
  all_float32(&e);
  e.u[a->id] = 0x1p-8;
  Tensor *t = tensor_with(SHAPE(R, K), x), *bl, *bs, *bg;
  Tensor *vl = bounded(&e, l, &t, NULL, &bl), *vs = bounded(&e, sm, &t, NULL, &bs), *vg = bounded(&e, lse, &t, NULL, &bg);
  REQUIRE(vl && vs && vg);
  double got[R * K], gotl[R];
  for (int r = 0; r < R; r++) {
    double a8[K], mx = -INFINITY, sum = 0;
    for (int k = 0; k < K; k++) a8[k] = round_bits(x[r * K + k] * f32(0.1), 8), mx = fmax(mx, a8[k]);
    for (int k = 0; k < K; k++) sum = f32(sum + f32(exp(f32(a8[k] - mx))));
    for (int k = 0; k < K; k++) got[r * K + k] = f32(f32(exp(f32(a8[k] - mx))) / sum);
    gotl[r] = f32(log(sum));
    CHECK(bl->data[r] >= vl->data[r]); /* the sum's absolute interval reaches 0 ... */
    CHECK(isfinite(bg->data[r]) && bg->data[r] < 10); /* ... its log is bounded all the same */
  }
  for (int i = 0; i < R * K; i++) CHECK(isfinite(bs->data[i]));
  check_bound("softmax", got, vs, bs, 0);
  check_bound("logsumexp", gotl, vg, bg, 0);
  Tensor *all[] = {vl, bl, vs, bs, vg, bg, t};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tensor_free(all[i]);
  benv_free(&e);
}
