/* test_grad.c: reverse-mode differentiation (src/grad) against central
   differences in float64, one loss per primitive (and per broadcasting
   pattern of the binary ones), each a weighted sum of the primitive's
   result with a random tensor so that no coordinate of the gradient
   cancels; the checker must also catch a planted wrong gradient, and a
   loss of more than one element is an error. */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/grad/grad.h"
#include "unit.h"

typedef struct GEnv {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Graph *g;
} GEnv;

static const Pos P0 = {0};

static void genv_init(GEnv *e) {
  e->a = arena_new();
  ctx_init(&e->c, e->a, stderr);
  e->c.unwind = &e->jb;
  e->g = graph_new(&e->c);
  e->g->entry = "loss";
}

static Shape sh(int rank, int64_t d0, int64_t d1, int64_t d2) {
  Shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  s.d[0].n = d0;
  s.d[1].n = d1;
  s.d[2].n = d2;
  return s;
}

static Node *param(GEnv *e, const char *name, Shape s) { return ir_input(e->g, name, ROLE_PARAM, &s, P0); }
static Node *tensor(GEnv *e, const char *name, Shape s) { return ir_input(e->g, name, ROLE_TENSOR, &s, P0); }

/* the loss: sum of y * w over every element (w a fresh random tensor of y's shape) */
static void set_loss(GEnv *e, Node *y) {
  Node *w = tensor(e, "w", y->shape);
  Node *v = ir_binary(e->g, OP_MUL, y, w, P0);
  while (v->shape.rank > 1 || (v->shape.rank == 1 && v->shape.d[0].n > 1)) {
    if (v->shape.d[v->shape.rank - 1].n > 1) v = ir_reduce(e->g, OP_SUM, v, v->shape.rank - 1, P0);
    Shape s = v->shape;
    s.rank--;
    if (s.rank == 0) break;
    v = ir_reshape(e->g, v, &s, P0);
  }
  e->g->output = v;
}

/* the largest error of the built loss's gradients, over seeds 1..3 */
static double worst(GEnv *e, bool plant) {
  Grads gr = grad_build(e->g);
  if (plant) gr.grad[0] = ir_binary(e->g, OP_MUL, gr.grad[0], ir_const(e->g, 1.001, P0), P0);
  double w = 0;
  for (uint64_t seed = 1; seed <= 3; seed++) {
    Tensor *in[16] = {0};
    interp_random_inputs(e->g, in, seed, true);
    double err[8], beyond[8];
    int64_t checked[8];
    grad_check(e->g, &gr, in, 64, err, beyond, checked);
    for (int k = 0; k < gr.n; k++) w = fmax(w, beyond[k] == beyond[k] ? beyond[k] : INFINITY);
    for (int i = 0; i < e->g->ninputs; i++) tensor_free(in[i]);
  }
  return w;
}

/* a positive version of x (log, sqrt, rsqrt, pow need one): |x| + 0.5 */
static Node *positive(GEnv *e, Node *x) {
  return ir_binary(e->g, OP_ADD, ir_unary(e->g, OP_ABS, x, P0), ir_const(e->g, 0.5, P0), P0);
}

/* Build a loss with build(e, i, j) and return its gradients' worst error
   (INFINITY if building or differentiating it failed); the setjmp lives
   here, away from the callers' loop variables. */
typedef void (*Build)(GEnv *e, int i, int j);

static double case_error_of(Build build, int i, int j, bool plant) {
  GEnv e;
  genv_init(&e);
  volatile double w = INFINITY;
  if (!setjmp(e.jb)) {
    build(&e, i, j);
    w = worst(&e, plant);
  }
  arena_free(e.a);
  return w;
}

static double case_error(Build build, int i, int j) { return case_error_of(build, i, j, false); }

static const Op unary_ops[] = {OP_NEG, OP_EXP, OP_LOG, OP_SQRT, OP_RSQRT, OP_TANH, OP_ERF, OP_SIGMOID, OP_RELU, OP_ABS};

static void build_unary(GEnv *e, int i, int j) {
  (void)j;
  Op op = unary_ops[i];
  Node *p = param(e, "p", sh(2, 3, 4, 0));
  bool pos = op == OP_LOG || op == OP_SQRT || op == OP_RSQRT;
  set_loss(e, ir_unary(e->g, op, pos ? positive(e, p) : p, P0));
}

TEST(grad_unary_primitives) {
  for (int i = 0; i < (int)(sizeof unary_ops / sizeof unary_ops[0]); i++) {
    double w = case_error(build_unary, i, 0);
    if (w > 1e-6) fprintf(stderr, "  %s: error %g\n", op_info[unary_ops[i]].name, w);
    CHECK(w <= 1e-6);
  }
}

static const Op binary_ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MAX, OP_MIN};

static void build_binary(GEnv *e, int i, int j) {
  /* the second operand: the same shape, a row [4], a column [3, 1], a scalar */
  Shape second[] = {sh(2, 3, 4, 0), sh(1, 4, 0, 0), sh(2, 3, 1, 0), sh(0, 0, 0, 0)};
  Node *p = param(e, "p", sh(2, 3, 4, 0)), *q = param(e, "q", second[j]);
  Node *a = p, *b = q;
  if (binary_ops[i] == OP_DIV) b = positive(e, q);
  if (binary_ops[i] == OP_POW) a = positive(e, p);
  set_loss(e, ir_binary(e->g, binary_ops[i], a, b, P0));
}

TEST(grad_binary_primitives_and_broadcasting) {
  for (int i = 0; i < (int)(sizeof binary_ops / sizeof binary_ops[0]); i++)
    for (int j = 0; j < 4; j++) {
      double w = case_error(build_binary, i, j);
      if (w > 1e-6) fprintf(stderr, "  %s (second operand %d): error %g\n", op_info[binary_ops[i]].name, j, w);
      CHECK(w <= 1e-6);
    }
}

static void build_reduce_select_product(GEnv *e, int c, int j) {
  (void)j;
  Node *p = param(e, "p", sh(2, 3, 4, 0)), *y = NULL;
  switch (c) {
  case 0: y = ir_reduce(e->g, OP_SUM, p, 1, P0); break;
  case 1: y = ir_reduce(e->g, OP_AMAX, p, 1, P0); break;
  case 2: y = ir_reduce(e->g, OP_AMIN, p, 0, P0); break;
  case 3: { /* select between two Params by a data-dependent mask */
    Node *q = param(e, "q", sh(1, 4, 0, 0)), *t = tensor(e, "t", sh(2, 3, 4, 0));
    y = ir_select(e->g, ir_binary(e->g, OP_GT, t, ir_const(e->g, 0, P0), P0), p, q, P0);
    break;
  }
  case 4: { /* a batched product against a shared matrix */
    Node *a = param(e, "a", sh(3, 2, 3, 4)), *b = param(e, "b", sh(2, 4, 5, 0));
    y = ir_matmul(e->g, a, b, P0);
    break;
  }
  case 5: { /* x ⬝ Wᵀ, a transposed weight */
    Node *x = tensor(e, "x", sh(2, 5, 4, 0));
    y = ir_matmul(e->g, x, ir_transpose(e->g, p, P0), P0);
    break;
  }
  default: /* a product of a Param with itself */ y = ir_matmul(e->g, ir_transpose(e->g, p, P0), p, P0); break;
  }
  set_loss(e, y);
}

/* every case 0..n-1 of build within 1e-6 */
static void check_cases(Build build, int n, const char *what) {
  for (int c = 0; c < n; c++) {
    double w = case_error(build, c, 0);
    if (w > 1e-6) fprintf(stderr, "  %s case %d: error %g\n", what, c, w);
    CHECK(w <= 1e-6);
  }
}

TEST(grad_reductions_select_and_products) { check_cases(build_reduce_select_product, 7, "reduce/select/product"); }

static void build_layout(GEnv *e, int c, int j) {
  (void)j;
  Node *p = param(e, "p", sh(3, 2, 3, 4)), *y = NULL;
  switch (c) {
  case 0: {
    int perm[3] = {2, 0, 1};
    y = ir_permute(e->g, p, perm, 3, P0);
    break;
  }
  case 1: {
    Shape s = sh(2, 6, 4, 0);
    y = ir_reshape(e->g, p, &s, P0);
    break;
  }
  case 2: y = ir_slice(e->g, p, 2, 1, 3, P0); break;
  case 3: { /* a Param concatenated with itself and another */
    Node *q = param(e, "q", sh(3, 2, 3, 2)), *xs[3] = {p, q, p};
    y = ir_concat(e->g, xs, 3, 2, P0);
    break;
  }
  case 4: { /* rows of a table by index (an embedding): its gradient adds each row's adjoint into the row it read */
    Node *table = param(e, "E", sh(2, 5, 3, 0));
    Shape is = sh(2, 7, 1, 0);
    y = ir_gather(e->g, table, ir_input(e->g, "i", ROLE_INDEX, &is, P0), 0, P0);
    break;
  }
  default: { /* gather along the last axis, indices repeating and broadcast over the first */
    Shape is = sh(3, 1, 3, 5);
    Node *idx = ir_input(e->g, "i", ROLE_INDEX, &is, P0);
    y = ir_gather(e->g, p, idx, 2, P0);
    break;
  }
  }
  set_loss(e, y);
}

TEST(grad_layout_primitives) { check_cases(build_layout, 6, "layout"); }

TEST(grad_check_catches_a_wrong_gradient) {
  int tanh_at = 0;
  while (unary_ops[tanh_at] != OP_TANH) tanh_at++;
  CHECK(case_error_of(build_unary, tanh_at, 0, true) > 1e-6); /* a gradient 0.1% off */
}

TEST(grad_needs_a_loss) {
  GEnv e;
  genv_init(&e);
  e.c.err = NULL; /* the diagnostic is expected */
  volatile bool unwound = false;
  if (setjmp(e.jb)) {
    unwound = true;
  } else {
    Node *p = param(&e, "p", sh(2, 3, 4, 0));
    e.g->output = ir_unary(e.g, OP_EXP, p, P0);
    grad_build(e.g);
  }
  CHECK(unwound);
  arena_free(e.a);
}

/* grad_check samples elements at random: an error confined to one column of
   a Param whose row count is a multiple of the sample count (an even stride
   falls on a few columns only) is still found */
TEST(grad_check_samples_every_column) {
  UNIT_GRAPH_ENV(GEnv, genv_init, e)
  Node *p = param(&e, "p", sh(2, 48, 16, 0));
  set_loss(&e, ir_unary(e.g, OP_TANH, p, P0));
  Grads gr = grad_build(e.g);
  Shape row = sh(2, 1, 16, 0);
  Node *col = ir_reshape(e.g, ir_iota(e.g, 16, NULL, P0), &row, P0);
  Node *bump = ir_select(e.g, ir_binary(e.g, OP_EQ, col, ir_const_int(e.g, 3, P0), P0), ir_const(e.g, 0.01, P0),
                         ir_const(e.g, 0, P0), P0);
  gr.grad[0] = ir_binary(e.g, OP_ADD, gr.grad[0], bump, P0);
  Tensor *in[4] = {0};
  interp_random_inputs(e.g, in, 1, true);
  double err[1], beyond[1];
  int64_t checked[1];
  grad_check(e.g, &gr, in, 64, err, beyond, checked);
  CHECK(beyond[0] > 1e-6);
  CHECK(checked[0] == 64);
  for (int i = 0; i < e.g->ninputs; i++) tensor_free(in[i]);
  arena_free(e.a);
}

/* x^e at x = 0: PyTorch's 0 for the exponent's gradient (where e >= 0), not
   0 * log 0 = NaN */
TEST(grad_pow_at_a_zero_base) {
  UNIT_GRAPH_ENV(GEnv, genv_init, e)
  Node *x = tensor(&e, "x", sh(2, 4, 3, 0)), *p = param(&e, "p", sh(1, 3, 0, 0));
  Node *ex = ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_MUL, p, p, P0), ir_const(e.g, 0.5, P0), P0);
  set_loss(&e, ir_binary(e.g, OP_POW, ir_unary(e.g, OP_RELU, x, P0), ex, P0));
  Grads gr = grad_build(e.g);
  Tensor *in[4] = {0};
  interp_random_inputs(e.g, in, 2, true);
  for (int i = 0; i < 12; i++) in[0]->data[i] = i % 2 ? 0.0 : -1.0; /* every base 0 */
  Tensor *gp = interp_run_ex(e.g, in, NULL, gr.grad[0], NULL, NULL);
  for (int i = 0; i < 3; i++) CHECK(gp->data[i] == 0.0);
  tensor_free(gp);
  for (int i = 0; i < e.g->ninputs; i++) tensor_free(in[i]);
  arena_free(e.a);
}

/* ---- the float32 executor against the float64 interpreter ---- */

/* The largest difference between exec32_run_many and interp_run_many over
   the loss and its gradients of the built graph, relative to each value's
   largest magnitude (the loss's: at least 1, the size of its terms), or
   INFINITY if building or running failed. */
static double exec32_error(Build build, int i, int j) {
  GEnv e;
  genv_init(&e);
  volatile double w = INFINITY;
  Tensor *in[16] = {0}, *a[16] = {0}, *b[16] = {0};
  if (!setjmp(e.jb)) {
    build(&e, i, j);
    Grads gr = grad_build(e.g);
    Node *targets[16];
    int nt = 0;
    targets[nt++] = e.g->output;
    for (int k = 0; k < gr.n && nt < 16; k++) targets[nt++] = gr.grad[k];
    interp_random_inputs(e.g, in, 1, true);
    interp_run_many(e.g, in, targets, nt, a);
    exec32_run_many(e.g, in, targets, nt, b);
    /* the trainer's way in and out (float32 inputs read in place, the
       gradients computed into the caller's buffers): the same numbers */
    float *in32[16] = {0}, *out32[16] = {0};
    Tensor *c[16] = {0};
    for (int k = 0; k < e.g->ninputs && k < 16; k++) {
      int64_t n = shape_numel(&in[k]->shape);
      in32[k] = malloc(sizeof(float) * (size_t)(n + 1));
      for (int64_t q = 0; q < n; q++) in32[k][q] = (float)in[k]->data[q];
    }
    for (int t = 1; t < nt; t++) out32[t] = malloc(sizeof(float) * (size_t)(shape_numel(&targets[t]->shape) + 1));
    Exec32Io io = {(const float *const *)in32, out32, NULL};
    exec32_run_io(e.g, in, targets, nt, c, &io);
    bool same = c[0] && c[0]->data[0] == b[0]->data[0];
    for (int t = 1; t < nt; t++)
      for (int64_t q = 0; same && q < shape_numel(&targets[t]->shape); q++)
        same = (double)out32[t][q] == b[t]->data[q] || (isnan(out32[t][q]) && isnan(b[t]->data[q]));
    for (int k = 0; k < 16; k++) free(in32[k]), free(out32[k]), tensor_free(c[k]);
    double worst_rel = same ? 0 : INFINITY;
    for (int t = 0; t < nt; t++) {
      double scale = 0, diff = 0;
      int64_t n = shape_numel(&a[t]->shape);
      for (int64_t q = 0; q < n; q++) scale = fmax(scale, fabs(a[t]->data[q]));
      if (t == 0) scale = fmax(scale, 1); /* the loss sums O(1) terms that may cancel */
      for (int64_t q = 0; q < n; q++) diff = fmax(diff, fabs(a[t]->data[q] - b[t]->data[q]));
      worst_rel = fmax(worst_rel, diff / (scale + 1e-30));
    }
    w = worst_rel;
  }
  for (int k = 0; k < 16; k++) tensor_free(in[k]), tensor_free(a[k]), tensor_free(b[k]);
  arena_free(e.a);
  return w;
}

static void build_slices(GEnv *e, int c, int j);

/* every primitive's loss and gradients, in float32, within float32 rounding */
TEST(exec32_matches_the_interpreter) {
  double w = 0;
  for (int i = 0; i < (int)(sizeof unary_ops / sizeof unary_ops[0]); i++) w = fmax(w, exec32_error(build_unary, i, 0));
  for (int i = 0; i < (int)(sizeof binary_ops / sizeof binary_ops[0]); i++)
    for (int j = 0; j < 4; j++) w = fmax(w, exec32_error(build_binary, i, j));
  for (int c = 0; c < 7; c++) w = fmax(w, exec32_error(build_reduce_select_product, c, 0));
  for (int c = 0; c < 6; c++) w = fmax(w, exec32_error(build_layout, c, 0));
  for (int c = 0; c < 2; c++) w = fmax(w, exec32_error(build_slices, c, 0)); /* computed inside a concatenation */
  if (w > 1e-5 || getenv("VERIFY_SHOW")) fprintf(stderr, "  exec32 against float64: worst %.3g of a value's scale\n", w);
  CHECK(w <= 1e-5);
  CHECK(w > 0); /* it does run in float32 */
}

/* ---- slices of one tensor ---- */

/* p [6, 3] read as p[l] for every l (and, in case 1, p[1] once more and
   p[0:4] overlapping them): the loss sums each read times its own weights */
static void build_slices(GEnv *e, int c, int j) {
  (void)j;
  Node *p = param(e, "p", sh(2, 6, 3, 0)), *acc = NULL;
  int64_t ranges[8][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {1, 2}, {0, 4}};
  int n = c == 0 ? 6 : 8;
  for (int l = 0; l < n; l++) {
    Node *s = ir_slice(e->g, p, 0, ranges[l][0], ranges[l][1], P0);
    Node *w = tensor(e, arena_printf(e->a, "w%d", l), s->shape);
    Node *t = ir_reduce(e->g, OP_SUM, ir_reduce(e->g, OP_SUM, ir_binary(e->g, OP_MUL, s, w, P0), 1, P0), 0, P0);
    acc = acc ? ir_binary(e->g, OP_ADD, acc, t, P0) : t;
  }
  e->g->output = acc;
}

/* Nodes of p's full shape that add two tensors, in the cone of p's gradient. */
static int full_adds(Graph *g, Node *grad, const Shape *full) {
  bool *seen = calloc((size_t)g->nnodes, sizeof *seen);
  Node *stack[4096];
  int sp = 0, n = 0;
  stack[sp++] = grad;
  while (sp) {
    Node *x = stack[--sp];
    if (seen[x->id]) continue;
    seen[x->id] = true;
    n += x->op == OP_ADD && shape_equal(&x->shape, full);
    for (int k = 0; k < x->nin && sp < 4096; k++) stack[sp++] = x->in[k];
  }
  free(seen);
  return n;
}

TEST(grad_slices_of_one_tensor_concatenated) {
  for (int c = 0; c < 2; c++) CHECK(case_error(build_slices, c, 0) <= 1e-6);
  /* the six disjoint slices: one concatenation, no sum of padded copies */
  GEnv e;
  genv_init(&e);
  if (!setjmp(e.jb)) {
    build_slices(&e, 0, 0);
    Grads gr = grad_build(e.g);
    REQUIRE(gr.n == 1);
    CHECK(full_adds(e.g, gr.grad[0], &gr.param[0]->shape) == 0);
    CHECK(gr.grad[0]->op == OP_CONCAT && gr.grad[0]->nin == 6);
  } else {
    CHECK(false);
  }
  arena_free(e.a);
}

/* The executor's views: a transpose read by a product and by an
   elementwise op (written out), one read by products only (left to sgemm),
   one asked for as a target, and a slice and a reshape of a block that
   dies while its views live on. */
TEST(exec32_views_and_transposes) {
  GEnv e;
  genv_init(&e);
  Tensor *in[8] = {0}, *a[8] = {0}, *b[8] = {0};
  volatile double worst_rel = INFINITY;
  if (!setjmp(e.jb)) {
    Node *p = param(&e, "p", sh(2, 6, 4, 0)), *q = tensor(&e, "q", sh(2, 6, 5, 0));
    Node *pt = ir_transpose(e.g, p, P0);                         /* [4, 6] */
    Node *u = ir_matmul(e.g, pt, q, P0);                         /* products only ... */
    Node *r = ir_transpose(e.g, ir_unary(e.g, OP_EXP, p, P0), P0); /* [4, 6] */
    Node *v = ir_binary(e.g, OP_ADD, ir_matmul(e.g, r, q, P0), ir_unary(e.g, OP_TANH, ir_matmul(e.g, r, q, P0), P0), P0);
    Node *w = ir_binary(e.g, OP_MUL, ir_transpose(e.g, r, P0), ir_const(e.g, 2, P0), P0); /* r read elementwise too */
    Shape s3 = sh(3, 2, 3, 4);
    Node *slice = ir_slice(e.g, ir_reshape(e.g, ir_unary(e.g, OP_NEG, p, P0), &s3, P0), 0, 1, 2, P0);
    Node *targets[6] = {u, v, w, pt, slice, r};
    e.g->output = u;
    interp_random_inputs(e.g, in, 3, true);
    interp_run_many(e.g, in, targets, 6, a);
    exec32_run_many(e.g, in, targets, 6, b);
    double m = 0;
    for (int t = 0; t < 6; t++) {
      double scale = 0, diff = 0;
      int64_t n = shape_numel(&a[t]->shape);
      CHECK(shape_equal(&a[t]->shape, &b[t]->shape));
      for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs(a[t]->data[k]));
      for (int64_t k = 0; k < n; k++) diff = fmax(diff, fabs(a[t]->data[k] - b[t]->data[k]));
      m = fmax(m, diff / (scale + 1e-30));
    }
    worst_rel = m;
  }
  CHECK(worst_rel <= 1e-5);
  for (int k = 0; k < 8; k++) tensor_free(in[k]), tensor_free(a[k]), tensor_free(b[k]);
  arena_free(e.a);
}
