/* test_interp.c: the graph interpreter against hand-computed small cases,
   its error paths (out-of-range gather, too-large tensors; run under ASan
   these also check that nothing leaks on unwinding), random inputs and index
   bounds, and the three printers. */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/interp/interp.h"
#include "unit.h"

/* ---- helpers ---- */

typedef struct Env {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Graph *g;
  char *msg;      /* diagnostics, captured */
  size_t msglen;
  FILE *err;
} Env;

static void env_init(Env *e) {
  e->a = arena_new();
  e->msg = NULL;
  e->msglen = 0;
  e->err = open_memstream(&e->msg, &e->msglen);
  ctx_init(&e->c, e->a, e->err);
  e->c.unwind = &e->jb;
  e->g = graph_new(&e->c);
}

static void env_free(Env *e) {
  fclose(e->err);
  free(e->msg);
  arena_free(e->a);
}

/* The diagnostics printed so far. */
static const char *env_msg(Env *e) {
  fflush(e->err);
  return e->msg ? e->msg : "";
}

static Shape shape_of(const int64_t *d, int rank) {
  Shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  for (int i = 0; i < rank; i++) s.d[i].n = d[i];
  return s;
}
#define SH(...)                                                                \
  shape_of((const int64_t[]){__VA_ARGS__},                                     \
           (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* a pointer to a temporary copy of shape s */
#define SHP(s) (&(Shape[1]){s}[0])

static const Pos P0 = {0};

static Tensor *tensor_of(Shape s, ElemKind k, const double *v) {
  Tensor *t = tensor_new(&s, k);
  memcpy(t->data, v, (size_t)shape_numel(&s) * sizeof(double));
  return t;
}

static Node *in_real(Env *e, const char *name, Shape s) {
  return ir_input(e->g, name, ROLE_TENSOR, &s, P0);
}
static Node *in_index(Env *e, const char *name, Shape s) {
  return ir_input(e->g, name, ROLE_INDEX, &s, P0);
}

/* Run e->g with output `out` on the given inputs (not freed). */
static Tensor *run(Env *e, Node *out, Tensor **inputs) {
  e->g->output = out;
  return interp_run(e->g, inputs);
}

static bool same(double a, double b) {
  return (isnan(a) && isnan(b)) || a == b;
}

static bool all_same(const Tensor *t, const double *v, int64_t n) {
  if (shape_numel(&t->shape) != n) return false;
  for (int64_t i = 0; i < n; i++)
    if (!same(t->data[i], v[i])) return false;
  return true;
}

/* ---- elementwise ---- */

TEST(interp_broadcast_add_3x1_1x4) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(3, 1)), *b = in_real(&e, "b", SH(1, 4));
  Node *s = ir_binary(e.g, OP_ADD, a, b, P0);
  Node *d = ir_binary(e.g, OP_SUB, s, ir_const(e.g, 0.5, P0), P0);
  Tensor *ins[2] = {tensor_of(SH(3, 1), EK_REAL, (double[]){1, 2, 3}),
                    tensor_of(SH(1, 4), EK_REAL, (double[]){10, 20, 30, 40})};
  Tensor *o = run(&e, d, ins);
  REQUIRE(o && o->shape.rank == 2 && o->shape.d[0].n == 3 && o->shape.d[1].n == 4);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) CHECK(o->data[i * 4 + j] == (i + 1) + 10.0 * (j + 1) - 0.5);
  CHECK(o->kind == EK_REAL);
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_broadcast_rank_mismatch) {
  Env e;
  env_init(&e);
  /* [2,3] * [3] and [4] / [2,1,1] style right alignment */
  Node *a = in_real(&e, "a", SH(2, 3)), *b = in_real(&e, "b", SH(3));
  Node *m = ir_binary(e.g, OP_MUL, a, b, P0);
  Tensor *ins[2] = {tensor_of(SH(2, 3), EK_REAL, (double[]){1, 2, 3, 4, 5, 6}),
                    tensor_of(SH(3), EK_REAL, (double[]){1, 10, 100})};
  Tensor *o = run(&e, m, ins);
  CHECK(all_same(o, (double[]){1, 20, 300, 4, 50, 600}, 6));
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_unary_ops) {
  static const Op ops[] = {OP_NEG, OP_EXP, OP_LOG, OP_SQRT, OP_RSQRT, OP_TANH,
                           OP_ERF, OP_SIGMOID, OP_RELU, OP_ABS};
  double x[] = {-2, -0.5, 0, 0.5, 2, NAN, 800, -800};
  int n = 8;
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    Env e;
    env_init(&e);
    Node *a = in_real(&e, "x", SH(8));
    Tensor *in = tensor_of(SH(8), EK_REAL, x);
    Tensor *o = run(&e, ir_unary(e.g, ops[k], a, P0), &in);
    for (int i = 0; i < n; i++) {
      double v = x[i], want = 0;
      switch (ops[k]) {
      case OP_NEG: want = -v; break;
      case OP_EXP: want = exp(v); break;
      case OP_LOG: want = log(v); break;
      case OP_SQRT: want = sqrt(v); break;
      case OP_RSQRT: want = 1 / sqrt(v); break;
      case OP_TANH: want = tanh(v); break;
      case OP_ERF: want = erf(v); break;
      case OP_SIGMOID: want = 1 / (1 + exp(-v)); break;
      case OP_RELU: want = v > 0 ? v : isnan(v) ? v : 0; break;
      case OP_ABS: want = fabs(v); break;
      default: break;
      }
      if (!same(o->data[i], want) && !(fabs(o->data[i] - want) <= 1e-15 * fabs(want))) {
        fprintf(stderr, "  %s(%g) = %g, want %g\n", op_info[ops[k]].name, v, o->data[i], want);
        CHECK(0);
      }
    }
    tensor_free(o);
    tensor_free(in);
    env_free(&e);
  }
}

TEST(interp_sigmoid_stable) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "x", SH(3));
  Tensor *in = tensor_of(SH(3), EK_REAL, (double[]){-1000, 1000, -745});
  Tensor *o = run(&e, ir_unary(e.g, OP_SIGMOID, a, P0), &in);
  CHECK(o->data[0] == 0 && o->data[1] == 1 && o->data[2] > 0);
  CHECK(!isnan(o->data[0]));
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

TEST(interp_cast_of_index) {
  Env e;
  env_init(&e);
  Node *i = in_index(&e, "i", SH(3));
  Node *c = ir_unary(e.g, OP_CAST, i, P0);
  Tensor *in = tensor_of(SH(3), EK_INT, (double[]){0, 4, 2});
  Tensor *o = run(&e, c, &in);
  CHECK(o->kind == EK_REAL);
  CHECK(all_same(o, (double[]){0, 4, 2}, 3));
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

TEST(interp_binary_max_min_pow_div_nan) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(5)), *b = in_real(&e, "b", SH(5));
  Node *outs[4] = {ir_binary(e.g, OP_MAX, a, b, P0), ir_binary(e.g, OP_MIN, a, b, P0),
                   ir_binary(e.g, OP_POW, a, b, P0), ir_binary(e.g, OP_DIV, a, b, P0)};
  double av[] = {1, NAN, 3, -2, 0}, bv[] = {2, 1, NAN, 3, 0};
  double want[4][5] = {{2, NAN, NAN, 3, 0},
                       {1, NAN, NAN, -2, 0},
                       {1, NAN, NAN, -8, 1},
                       {0.5, NAN, NAN, -2.0 / 3, NAN}};
  Tensor *ins[2] = {tensor_of(SH(5), EK_REAL, av), tensor_of(SH(5), EK_REAL, bv)};
  for (int k = 0; k < 4; k++) {
    Tensor *o = run(&e, outs[k], ins);
    CHECK(all_same(o, want[k], 5));
    tensor_free(o);
  }
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_compare) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(4)), *b = in_real(&e, "b", SH(4));
  static const Op ops[] = {OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE};
  double want[6][4] = {{1, 0, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 0},
                       {0, 1, 1, 0}, {0, 1, 0, 0}, {1, 0, 1, 1}};
  Tensor *ins[2] = {tensor_of(SH(4), EK_REAL, (double[]){1, 2, 3, NAN}),
                    tensor_of(SH(4), EK_REAL, (double[]){2, 2, 2, 2})};
  for (int k = 0; k < 6; k++) {
    Tensor *o = run(&e, ir_binary(e.g, ops[k], a, b, P0), ins);
    CHECK(o->kind == EK_BOOL);
    CHECK(all_same(o, want[k], 4));
    tensor_free(o);
  }
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_select_broadcast) {
  Env e;
  env_init(&e);
  /* causal-mask form: select (iota[3,1] >= iota[1,4]) x (-inf) */
  Node *r = ir_reshape(e.g, ir_iota(e.g, 3, NULL, P0), SHP(SH(3, 1)), P0);
  Node *c = ir_reshape(e.g, ir_iota(e.g, 4, NULL, P0), SHP(SH(1, 4)), P0);
  Node *mask = ir_binary(e.g, OP_GE, r, c, P0);
  Node *x = in_real(&e, "x", SH(1, 4));
  Node *s = ir_select(e.g, mask, x, ir_const(e.g, -INFINITY, P0), P0);
  Tensor *in = tensor_of(SH(1, 4), EK_REAL, (double[]){1, 2, 3, 4});
  Tensor *o = run(&e, s, &in);
  double m = -INFINITY;
  CHECK(all_same(o, (double[]){1, m, m, m, 1, 2, m, m, 1, 2, 3, m}, 12));
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

/* ---- reductions ---- */

TEST(interp_reduce_axes_and_nan) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2, 3));
  Tensor *in = tensor_of(SH(2, 3), EK_REAL, (double[]){1, 5, -2, 4, NAN, 0});
  struct { Op op; int axis; double want[3]; int n; } cases[] = {
      {OP_SUM, 1, {4, NAN}, 2},     {OP_AMAX, 1, {5, NAN}, 2},
      {OP_AMIN, 1, {-2, NAN}, 2},   {OP_SUM, 0, {5, NAN, -2}, 3},
      {OP_AMAX, 0, {4, NAN, 0}, 3}, {OP_AMIN, -2, {1, NAN, -2}, 3},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    Tensor *o = run(&e, ir_reduce(e.g, cases[k].op, a, cases[k].axis, P0), &in);
    int ax = cases[k].axis < 0 ? cases[k].axis + 2 : cases[k].axis;
    CHECK(o->shape.rank == 2 && o->shape.d[ax].n == 1);
    CHECK(all_same(o, cases[k].want, cases[k].n));
    tensor_free(o);
  }
  tensor_free(in);
  env_free(&e);
}

TEST(interp_reduce_nan_first_and_middle_axis) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2, 3, 2));
  double v[12] = {NAN, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Tensor *in = tensor_of(SH(2, 3, 2), EK_REAL, v);
  Tensor *o = run(&e, ir_reduce(e.g, OP_AMAX, a, 1, P0), &in);
  CHECK(all_same(o, (double[]){NAN, 5, 10, 11}, 4));
  tensor_free(o);
  o = run(&e, ir_reduce(e.g, OP_SUM, a, 1, P0), &in);
  CHECK(all_same(o, (double[]){NAN, 9, 24, 27}, 4));
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

/* ---- matmul ---- */

TEST(interp_matmul_broadcast_batch) {
  Env e;
  env_init(&e);
  /* a [2,1,2,3] x b [4,3,2] -> [2,4,2,2] */
  Node *a = in_real(&e, "a", SH(2, 1, 2, 3)), *b = in_real(&e, "b", SH(4, 3, 2));
  Node *m = ir_matmul(e.g, a, b, P0);
  double av[12], bv[24];
  for (int i = 0; i < 12; i++) av[i] = i * 0.5 - 2;
  for (int i = 0; i < 24; i++) bv[i] = (i % 7) - 3 + 0.25 * i;
  Tensor *ins[2] = {tensor_of(SH(2, 1, 2, 3), EK_REAL, av), tensor_of(SH(4, 3, 2), EK_REAL, bv)};
  Tensor *o = run(&e, m, ins);
  REQUIRE(o->shape.rank == 4 && o->shape.d[0].n == 2 && o->shape.d[1].n == 4);
  for (int p = 0; p < 2; p++)
    for (int q = 0; q < 4; q++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          double s = 0;
          for (int k = 0; k < 3; k++) s += av[p * 6 + i * 3 + k] * bv[q * 6 + k * 2 + j];
          CHECK_NEAR(o->data[((p * 4 + q) * 2 + i) * 2 + j], s, 1e-12);
        }
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_matmul_2d_and_int_operand) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2, 2)), *b = in_index(&e, "b", SH(2, 1));
  Tensor *ins[2] = {tensor_of(SH(2, 2), EK_REAL, (double[]){1, 2, 3, 4}),
                    tensor_of(SH(2, 1), EK_INT, (double[]){5, 6})};
  Tensor *o = run(&e, ir_matmul(e.g, a, b, P0), ins);
  CHECK(all_same(o, (double[]){17, 39}, 2));
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

/* ---- data movement ---- */

TEST(interp_permute) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2, 3, 4));
  double v[24];
  for (int i = 0; i < 24; i++) v[i] = i;
  Tensor *in = tensor_of(SH(2, 3, 4), EK_REAL, v);
  Tensor *o = run(&e, ir_permute(e.g, a, (int[]){2, 0, 1}, 3, P0), &in);
  REQUIRE(o->shape.d[0].n == 4 && o->shape.d[1].n == 2 && o->shape.d[2].n == 3);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      for (int k = 0; k < 3; k++) CHECK(o->data[(i * 2 + j) * 3 + k] == v[(j * 3 + k) * 4 + i]);
  tensor_free(o);
  o = run(&e, ir_transpose(e.g, a, P0), &in);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++) CHECK(o->data[(i * 4 + j) * 3 + k] == v[(i * 3 + k) * 4 + j]);
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

TEST(interp_reshape_slice_concat) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2, 6));
  double v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  Tensor *in = tensor_of(SH(2, 6), EK_REAL, v);
  Node *r = ir_reshape(e.g, a, SHP(SH(3, 4)), P0);
  Tensor *o = run(&e, r, &in);
  CHECK(o->shape.d[0].n == 3 && all_same(o, v, 12));
  tensor_free(o);
  /* slice [1:3) along axis 1 of [3,4] -> [[1,2],[5,6],[9,10]] */
  Node *s = ir_slice(e.g, r, 1, 1, 3, P0);
  o = run(&e, s, &in);
  CHECK(all_same(o, (double[]){1, 2, 5, 6, 9, 10}, 6));
  tensor_free(o);
  /* slice along axis 0 */
  o = run(&e, ir_slice(e.g, r, 0, 2, 3, P0), &in);
  CHECK(all_same(o, (double[]){8, 9, 10, 11}, 4));
  tensor_free(o);
  /* concat [3,2] (s) with [3,1] (slice 0:1) with [3,1] along axis 1 */
  Node *t = ir_slice(e.g, r, 1, 0, 1, P0);
  Node *parts[3] = {s, t, t};
  o = run(&e, ir_concat(e.g, parts, 3, 1, P0), &in);
  CHECK(o->shape.d[1].n == 4);
  CHECK(all_same(o, (double[]){1, 2, 0, 0, 5, 6, 4, 4, 9, 10, 8, 8}, 12));
  tensor_free(o);
  /* concat along axis 0 */
  Node *p2[2] = {s, s};
  o = run(&e, ir_concat(e.g, p2, 2, 0, P0), &in);
  CHECK(all_same(o, (double[]){1, 2, 5, 6, 9, 10, 1, 2, 5, 6, 9, 10}, 12));
  tensor_free(o);
  tensor_free(in);
  env_free(&e);
}

TEST(interp_iota_and_const) {
  Env e;
  env_init(&e);
  Node *i = ir_iota(e.g, 5, "N", P0);
  Node *x = ir_binary(e.g, OP_MUL, ir_unary(e.g, OP_CAST, i, P0), ir_const(e.g, 2, P0), P0);
  Tensor *o = run(&e, x, NULL);
  CHECK(all_same(o, (double[]){0, 2, 4, 6, 8}, 5));
  tensor_free(o);
  o = run(&e, ir_const(e.g, 3.5, P0), NULL);
  CHECK(o->shape.rank == 0 && o->data[0] == 3.5);
  tensor_free(o);
  env_free(&e);
}

/* ---- gather ---- */

TEST(interp_gather_embedding) {
  Env e;
  env_init(&e);
  /* table [V=5, D=3]; ids [4, 1]; take_along_axis(table, ids, 0) -> [4, 3] */
  Node *tab = in_real(&e, "E", SH(5, 3)), *ids = in_index(&e, "ids", SH(4, 1));
  Node *gth = ir_gather(e.g, tab, ids, 0, P0);
  double tv[15];
  for (int i = 0; i < 15; i++) tv[i] = 100 + i;
  double iv[4] = {4, 0, 2, 4};
  Tensor *ins[2] = {tensor_of(SH(5, 3), EK_REAL, tv), tensor_of(SH(4, 1), EK_INT, iv)};
  Tensor *o = run(&e, gth, ins);
  REQUIRE(o->shape.d[0].n == 4 && o->shape.d[1].n == 3);
  for (int i = 0; i < 4; i++)
    for (int d = 0; d < 3; d++) CHECK(o->data[i * 3 + d] == tv[(int)iv[i] * 3 + d]);
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_gather_cross_entropy) {
  Env e;
  env_init(&e);
  /* logits [3, 5], targets [3, 1], axis 1 (also as -1) -> [3, 1] */
  Node *lg = in_real(&e, "logits", SH(3, 5)), *tg = in_index(&e, "t", SH(3, 1));
  double lv[15];
  for (int i = 0; i < 15; i++) lv[i] = i * 1.5;
  Tensor *ins[2] = {tensor_of(SH(3, 5), EK_REAL, lv), tensor_of(SH(3, 1), EK_INT, (double[]){1, 4, 0})};
  Tensor *o = run(&e, ir_gather(e.g, lg, tg, -1, P0), ins);
  CHECK(o->shape.d[0].n == 3 && o->shape.d[1].n == 1);
  CHECK(all_same(o, (double[]){lv[1], lv[9], lv[10]}, 3));
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_gather_full_index_along_axis) {
  Env e;
  env_init(&e);
  /* idx with the same shape as x: a row permutation per column */
  Node *x = in_real(&e, "x", SH(2, 3)), *ix = in_index(&e, "i", SH(2, 3));
  Tensor *ins[2] = {tensor_of(SH(2, 3), EK_REAL, (double[]){1, 2, 3, 4, 5, 6}),
                    tensor_of(SH(2, 3), EK_INT, (double[]){1, 0, 1, 0, 0, 1})};
  Tensor *o = run(&e, ir_gather(e.g, x, ix, 0, P0), ins);
  CHECK(all_same(o, (double[]){4, 2, 6, 1, 2, 6}, 6));
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_gather_broadcast_data) {
  Env e;
  env_init(&e);
  /* x [1, 5] broadcast against idx [3, 2] along axis 0 -> [3, 2] */
  Node *x = in_real(&e, "x", SH(1, 5)), *ix = in_index(&e, "i", SH(3, 2));
  Tensor *ins[2] = {tensor_of(SH(1, 5), EK_REAL, (double[]){10, 11, 12, 13, 14}),
                    tensor_of(SH(3, 2), EK_INT, (double[]){0, 4, 2, 2, 3, 1})};
  Tensor *o = run(&e, ir_gather(e.g, x, ix, 1, P0), ins);
  CHECK(o->shape.d[0].n == 3 && o->shape.d[1].n == 2);
  CHECK(all_same(o, (double[]){10, 14, 12, 12, 13, 11}, 6));
  tensor_free(o);
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

/* One out-of-range case: index `bad` into an axis of size 3. */
static void gather_oob_case(double bad, const char *want) {
  Env e;
  env_init(&e);
  Node *lg = in_real(&e, "logits", SH(2, 3)), *tg = in_index(&e, "t", SH(2, 1));
  /* an intermediate that is live when the error strikes (leak check) */
  Node *ex = ir_unary(e.g, OP_EXP, lg, P0);
  Node *gth = ir_gather(e.g, ex, tg, 1, P0);
  Node *out = ir_binary(e.g, OP_ADD, gth, ir_reduce(e.g, OP_SUM, ex, 1, P0), P0);
  Tensor *ins[2] = {tensor_of(SH(2, 3), EK_REAL, (double[]){1, 2, 3, 4, 5, 6}),
                    tensor_of(SH(2, 1), EK_INT, (double[]){1, bad})};
  if (setjmp(e.jb) == 0) {
    tensor_free(run(&e, out, ins));
    CHECK(!"gather out of range was not caught");
  } else {
    CHECK(e.c.nerrors == 1);
    CHECK(strstr(env_msg(&e), want) != NULL);
  }
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_gather_out_of_range_is_error) {
  gather_oob_case(3, "gather index 3 out of range [0, 3)");
  gather_oob_case(-1, "gather index -1 out of range [0, 3)");
}

TEST(interp_too_large_is_error) {
  Env e;
  env_init(&e);
  e.c.max_elems = 10;
  Node *a = in_real(&e, "a", SH(3, 1)), *b = in_real(&e, "b", SH(1, 4));
  Node *s = ir_binary(e.g, OP_ADD, ir_unary(e.g, OP_EXP, a, P0), b, P0);
  Tensor *ins[2] = {tensor_of(SH(3, 1), EK_REAL, (double[]){1, 2, 3}),
                    tensor_of(SH(1, 4), EK_REAL, (double[]){1, 2, 3, 4})};
  if (setjmp(e.jb) == 0) {
    run(&e, s, ins);
    CHECK(!"not caught");
  } else {
    CHECK(strstr(env_msg(&e), "tensor of 12 elements is too large to evaluate here (limit 10)"));
  }
  tensor_free(ins[0]);
  tensor_free(ins[1]);
  env_free(&e);
}

TEST(interp_input_shape_mismatch_is_error) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(3));
  Tensor *in = tensor_of(SH(2), EK_REAL, (double[]){1, 2});
  if (setjmp(e.jb) == 0) {
    run(&e, ir_unary(e.g, OP_EXP, a, P0), &in);
    CHECK(!"not caught");
  } else {
    CHECK(strstr(env_msg(&e), "input 'a' has shape [2], expected [3]"));
  }
  tensor_free(in);
  env_free(&e);
}

TEST(interp_output_is_input_copy_and_shared_operands) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(2));
  Tensor *in = tensor_of(SH(2), EK_REAL, (double[]){3, -4});
  Tensor *o = run(&e, a, &in);
  CHECK(o != in && all_same(o, (double[]){3, -4}, 2));
  tensor_free(o);
  /* x*x with x an intermediate used twice, and by a later node */
  Node *x = ir_unary(e.g, OP_ABS, a, P0);
  Node *y = ir_binary(e.g, OP_MUL, x, x, P0);
  Node *z = ir_binary(e.g, OP_ADD, y, x, P0);
  o = run(&e, z, &in);
  CHECK(all_same(o, (double[]){12, 20}, 2));
  tensor_free(o);
  CHECK(all_same(in, (double[]){3, -4}, 2)); /* the input is untouched */
  tensor_free(in);
  env_free(&e);
}

TEST(interp_step_limit_unwinds_cleanly) {
  Env e;
  env_init(&e);
  Node *a = in_real(&e, "a", SH(4));
  Node *x = a;
  for (int i = 0; i < 10; i++) x = ir_unary(e.g, i % 2 ? OP_EXP : OP_TANH, x, P0);
  Tensor *in = tensor_of(SH(4), EK_REAL, (double[]){1, 2, 3, 4});
  e.c.steps = 0;
  e.c.max_steps = 5;
  if (setjmp(e.jb) == 0) {
    run(&e, x, &in);
    CHECK(!"not caught");
  } else {
    CHECK(e.c.nerrors == 1);
  }
  tensor_free(in);
  env_free(&e);
}

/* ---- random inputs and index bounds ---- */

/* A rewrite turns gather(logits, t) into sum(select(iota == t, logits, 0)):
   the bound is then the iota's length, not 2 (labels drawn from [0, 2)
   left every class past the second untested). */
TEST(ir_index_bound_follows_iota_compare) {
  Env e;
  env_init(&e);
  Node *lg = in_real(&e, "L", SH(4, 10));
  Node *t = in_index(&e, "t", SH(4));
  Node *col = ir_reshape(e.g, t, SHP(SH(4, 1)), P0);
  Node *row = ir_reshape(e.g, ir_iota(e.g, 10, NULL, P0), SHP(SH(1, 10)), P0);
  Node *hit = ir_binary(e.g, OP_EQ, row, col, P0);
  e.g->output = ir_reduce(e.g, OP_SUM, ir_select(e.g, hit, lg, ir_const(e.g, 0, P0), P0), 1, P0);
  CHECK(ir_index_bound(e.g, t) == 10);
  env_free(&e);
}

TEST(ir_index_bound_follows_layout) {
  Env e;
  env_init(&e);
  Node *tab = in_real(&e, "E", SH(7, 3));
  Node *lg = in_real(&e, "L", SH(4, 5));
  Node *ids = in_index(&e, "ids", SH(4));
  Node *lone = in_index(&e, "lone", SH(2));
  Node *col = ir_reshape(e.g, ids, SHP(SH(4, 1)), P0);
  Node *g1 = ir_gather(e.g, tab, col, 0, P0);             /* bound 7 */
  Node *g2 = ir_gather(e.g, lg, col, 1, P0);              /* bound 5 */
  Node *out = ir_binary(e.g, OP_ADD, ir_reduce(e.g, OP_SUM, g1, 1, P0), g2, P0);
  e.g->output = out;
  CHECK(ir_index_bound(e.g, ids) == 5);
  CHECK(ir_index_bound(e.g, lone) == 2);
  Tensor *ins[4] = {0};
  interp_random_inputs(e.g, ins, 42, false);
  for (int i = 0; i < 4; i++) REQUIRE(ins[i]);
  CHECK(ins[2]->kind == EK_INT && ins[0]->kind == EK_REAL);
  for (int i = 0; i < 4; i++) CHECK(ins[2]->data[i] >= 0 && ins[2]->data[i] < 5 && ins[2]->data[i] == floor(ins[2]->data[i]));
  for (int i = 0; i < 2; i++) CHECK(ins[3]->data[i] == 0 || ins[3]->data[i] == 1);
  double sum = 0;
  for (int i = 0; i < 21; i++) sum += fabs(ins[0]->data[i]);
  CHECK(sum > 0 && isfinite(sum));
  /* deterministic per seed; a given input is left alone */
  Tensor *again[4] = {0};
  again[0] = tensor_of(SH(7, 3), EK_REAL, ins[0]->data);
  again[0]->data[0] = 12345;
  interp_random_inputs(e.g, again, 42, false);
  CHECK(again[0]->data[0] == 12345);
  CHECK(memcmp(again[1]->data, ins[1]->data, 20 * sizeof(double)) == 0);
  CHECK(memcmp(again[2]->data, ins[2]->data, 4 * sizeof(double)) == 0);
  Tensor *o = interp_run(e.g, ins);
  CHECK(o && o->shape.d[0].n == 4);
  tensor_free(o);
  for (int i = 0; i < 4; i++) {
    tensor_free(ins[i]);
    tensor_free(again[i]);
  }
  env_free(&e);
}

/* A Param reaching a matmul operand through layout ops is a weight, drawn
   normal(0, 1/fan_in); a Tensor input, a gathered table and a Param used
   elementwise stay normal(0, 1). */
TEST(ir_fan_in_marks_weights) {
  Env e;
  env_init(&e);
  Node *x = in_real(&e, "x", SH(6, 16));
  Node *w = ir_input(e.g, "W", ROLE_PARAM, SHP(SH(4, 16)), P0);    /* x . W^T: fan-in 16 */
  Node *v = ir_input(e.g, "V", ROLE_PARAM, SHP(SH(256)), P0);      /* reshaped to [4, 64] */
  Node *tab = ir_input(e.g, "E", ROLE_PARAM, SHP(SH(9, 4)), P0);   /* gathered rows */
  Node *gain = ir_input(e.g, "g", ROLE_PARAM, SHP(SH(4)), P0);     /* elementwise */
  Node *p = ir_input(e.g, "P", ROLE_PARAM, SHP(SH(4, 64)), P0);    /* contracted over 4, then 64 */
  Node *tok = ir_input(e.g, "c", ROLE_PARAM, SHP(SH(1, 4)), P0);   /* a token concatenated to data */
  Node *ids = in_index(&e, "ids", SH(6, 1));
  Node *h = ir_matmul(e.g, x, ir_transpose(e.g, w, P0), P0);        /* [6, 4] */
  Node *v2 = ir_reshape(e.g, v, SHP(SH(4, 64)), P0);
  Node *h2 = ir_matmul(e.g, h, v2, P0);                             /* [6, 64] */
  Node *emb = ir_gather(e.g, tab, ids, 0, P0);                      /* [6, 4] */
  Node *h3 = ir_matmul(e.g, ir_binary(e.g, OP_MUL, emb, gain, P0), v2, P0);
  Node *h4 = ir_matmul(e.g, ir_matmul(e.g, h, p, P0), ir_transpose(e.g, p, P0), P0); /* [6, 4] */
  Node *h5 = ir_matmul(e.g, ir_concat(e.g, (Node *[]){h4, tok}, 2, 0, P0), ir_transpose(e.g, h4, P0), P0);
  e.g->output = ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_ADD, h2, h3, P0),
                          ir_reduce(e.g, OP_SUM, ir_slice(e.g, h5, 0, 0, 6, P0), 1, P0), P0);
  CHECK(ir_fan_in(e.g, w) == 16);
  CHECK(ir_fan_in(e.g, v) == 4);
  CHECK(ir_fan_in(e.g, p) == 4); /* its first matmul's (a backward pass's transposed use comes later) */
  CHECK(ir_fan_in(e.g, tab) == 0);
  CHECK(ir_fan_in(e.g, gain) == 0);
  CHECK(ir_fan_in(e.g, tok) == 0);
  CHECK(ir_fan_in(e.g, x) == 0);
  CHECK(ir_fan_in(e.g, ids) == 0);
  CHECK(ir_index_bound(e.g, ids) == 9);
  /* the interpreter's random inputs follow the rule: W's spread is 1/4 of x's */
  Tensor *ins[8] = {0};
  interp_random_inputs(e.g, ins, 7, false);
  double sx = 0, sw = 0;
  for (int i = 0; i < 64; i++) sx += ins[0]->data[i] * ins[0]->data[i], sw += ins[1]->data[i] * ins[1]->data[i];
  CHECK(sw > 0 && sx / sw > 16 / 2.5 && sx / sw < 16 * 2.5);
  /* ... and with unit_weights W is normal(0, 1) like x */
  Tensor *unit[8] = {0};
  interp_random_inputs(e.g, unit, 7, true);
  double su = 0;
  for (int i = 0; i < 64; i++) su += unit[1]->data[i] * unit[1]->data[i];
  CHECK(su > 0 && sx / su > 1 / 2.5 && sx / su < 2.5);
  for (int i = 0; i < 8; i++) tensor_free(ins[i]), tensor_free(unit[i]);
  env_free(&e);
}

/* ---- printers ---- */

static char *capture(void (*pr)(FILE *, const Graph *), const Graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  pr(f, g);
  fclose(f);
  return buf;
}

TEST(print_text_dot_json) {
  Env e;
  env_init(&e);
  SrcFile *src = src_from_string(e.a, "ex.lean", "def f\n", 6);
  Pos p = {.file = src, .line = 3, .col = 38};
  Shape sq = SH(4, 8);
  sq.d[0].sym = "B";
  Node *q = ir_input(e.g, "q", ROLE_TENSOR, &sq, p);
  Node *w = ir_input(e.g, "W", ROLE_PARAM, SHP(SH(8, 2)), p);
  Node *c = ir_const(e.g, INFINITY, p);
  Node *m = ir_matmul(e.g, q, w, p);
  Node *mx = ir_reduce(e.g, OP_AMAX, m, 1, p);
  Node *pm = ir_permute(e.g, m, (int[]){1, 0}, 2, p);
  Node *sl = ir_slice(e.g, pm, 0, 0, 1, p);
  Node *out = ir_binary(e.g, OP_MIN, ir_binary(e.g, OP_ADD, sl, ir_permute(e.g, mx, (int[]){1, 0}, 2, p), p), c, p);
  e.g->output = out;
  e.g->entry = "f";
  char *t = capture(graph_print_text, e.g);
  CHECK(strstr(t, "graph f(q, W) -> %") == t);
  CHECK(strstr(t, "  %0 = input q : real[B=4, 8]  @ ex.lean:3:38\n"));
  CHECK(strstr(t, "  %1 = input W (param) : real[8, 2]  @ ex.lean:3:38\n"));
  CHECK(strstr(t, "  %2 = const inf : real[]  @ ex.lean:3:38\n"));
  CHECK(strstr(t, "  %3 = matmul %0, %1 : real[B=4, 2]"));
  CHECK(strstr(t, "  %4 = amax %3 axis=1 : real[B=4, 1]"));
  CHECK(strstr(t, "  %5 = permute %3 [1, 0] : real[2, B=4]"));
  CHECK(strstr(t, "  %6 = slice %5 [0:1] axis=0 : real[1, B=4]"));
  CHECK(strstr(t, "  return %"));
  char *d = capture(graph_print_dot, e.g);
  CHECK(strstr(d, "digraph \"f\" {") == d);
  CHECK(strstr(d, "n0 -> n3 [label=\"0\"];"));
  CHECK(strstr(d, "peripheries=2"));
  char *j = capture(graph_print_json, e.g);
  CHECK(strstr(j, "\"entry\":\"f\""));
  CHECK(strstr(j, "{\"name\":\"W\",\"role\":\"param\",\"node\":1,\"fan_in\":8}"));
  CHECK(strstr(j, "{\"name\":\"q\",\"role\":\"tensor\",\"node\":0}"));
  CHECK(strstr(j, "\"sym\":[\"B\",null]"));
  CHECK(strstr(j, "\"value\":\"inf\""));
  CHECK(strstr(j, "\"perm\":[1,0]"));
  CHECK(strstr(j, "\"lo\":0,\"hi\":1,\"axis\":0"));
  CHECK(strstr(j, "\"pos\":\"ex.lean:3:38\""));
  free(t);
  free(d);
  free(j);
  env_free(&e);
}
