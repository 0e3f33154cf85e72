/*
 * builtins.c: the primitives of the language, one table.
 *
 * Each entry names the primitive, its parameters in order (optional ones,
 * with their defaults, last, so `sum x (dim := 0)` and `sum x 0` both work),
 * and the function that builds its graph.  The elementwise and reduction
 * families share one fire function each and carry their op.  Every name here
 * is also declared, for Lean users, in lean/Tilesmith.lean; a unit test checks
 * that the two lists agree.
 */
#include <math.h>
#include <string.h>

#include "value.h"

#define P(n) {.name = n}

static Value *fire_unary(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  return do_unary(E, b->op, a[0], call);
}

static Value *fire_binary(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  return do_binary(E, b->op, b->name, a[0], a[1], call);
}

static Node *tensor_arg(Elab *E, const Builtin *b, Value *v, Pos call) {
  return as_node(E, v, false, b->name, call);
}

static int dim_arg(Elab *E, Value *v) {
  int64_t d = want_int(E, v, "'dim'");
  if (d < -TS_MAX_RANK || d >= TS_MAX_RANK)
    ts_error(elab_ctx(E), v->pos, "dim %lld is out of range (tensors have at most %d dimensions)", (long long)d,
             TS_MAX_RANK);
  return (int)d;
}

static Value *fire_reduce(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  return val_tensor(E, ir_reduce(elab_graph(E), b->op, x, dim_arg(E, a[1]), call), call);
}

static Value *fire_matmul(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  (void)b;
  return do_binary(E, OP_MATMUL, "⬝", a[0], a[1], call);
}

static Value *fire_transpose(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  return val_tensor(E, ir_transpose(elab_graph(E), tensor_arg(E, b, a[0], call), call), call);
}

static Value *fire_permute(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  int n;
  Value **items = want_list(E, a[1], "the permutation of 'permute'", &n);
  if (n > TS_MAX_RANK)
    ts_error(elab_ctx(E), a[1]->pos, "'permute' of a rank-%d tensor needs %d entries, not %d", x->shape.rank,
             x->shape.rank, n);
  int perm[TS_MAX_RANK];
  for (int i = 0; i < n; i++) {
    int64_t v = want_int(E, items[i], "an entry of the permutation");
    perm[i] = v < 0 || v >= TS_MAX_RANK ? -1 : (int)v;
  }
  return val_tensor(E, ir_permute(elab_graph(E), x, perm, n, call), call);
}

static Value *fire_reshape(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  int n;
  Value **items = want_list(E, a[1], "the dimensions of 'reshape'", &n);
  if (n > TS_MAX_RANK) ts_error(elab_ctx(E), a[1]->pos, "tensors have at most %d dimensions", TS_MAX_RANK);
  Shape s = {.rank = n};
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < n; i++) {
    int64_t v = want_int(E, items[i], "a dimension of 'reshape'");
    if (v == -1 && infer < 0) {
      infer = i;
      continue;
    }
    if (v < 0) ts_error(elab_ctx(E), items[i]->pos, "a dimension must be a Nat (or one -1 to infer it)");
    s.d[i] = (Dim){v, value_sym(items[i])};
    if (v && known > INT64_MAX / v) ts_error(elab_ctx(E), items[i]->pos, "the shape is too large");
    known *= v;
  }
  if (infer >= 0) {
    int64_t total = shape_numel(&x->shape);
    if (known == 0 || total % known != 0) {
      char buf[256];
      ts_error(elab_ctx(E), items[infer]->pos, "cannot infer the -1 dimension: %s has %lld elements, "
               "not a multiple of %lld", shape_str(&x->shape, buf, sizeof buf), (long long)total, (long long)known);
    }
    s.d[infer] = (Dim){total / known, NULL};
  }
  return val_tensor(E, ir_reshape(elab_graph(E), x, &s, call), call);
}

static Value *fire_concat(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  int n;
  Value **items = want_list(E, a[0], "the first argument of 'concat'", &n);
  Node **xs = arena_alloc(elab_ctx(E)->arena, sizeof(Node *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) xs[i] = tensor_arg(E, b, items[i], call);
  return val_tensor(E, ir_concat(elab_graph(E), xs, n, dim_arg(E, a[1]), call), call);
}

static Value *fire_slice(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  int64_t lo = want_int(E, a[1], "the start of 'slice'"), hi = want_int(E, a[2], "the end of 'slice'");
  return val_tensor(E, ir_slice(elab_graph(E), x, dim_arg(E, a[3]), lo, hi, call), call);
}

static Value *fire_gather(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  Node *idx = as_node(E, a[1], true, "gather", call);
  return val_tensor(E, ir_gather(elab_graph(E), x, idx, dim_arg(E, a[2]), call), call);
}

static Value *fire_iota(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  (void)b;
  int64_t n = want_int(E, a[0], "the size of 'iota'");
  return val_tensor(E, ir_iota(elab_graph(E), n, value_sym(a[0]), call), call);
}

static Value *fire_select(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *c = tensor_arg(E, b, a[0], call);
  bool ints = a[1]->kind == V_TENSOR && a[1]->node && a[1]->node->kind == EK_INT &&
              a[2]->kind == V_TENSOR && a[2]->node && a[2]->node->kind == EK_INT;
  Node *x = as_node(E, a[1], ints, "select", call), *y = as_node(E, a[2], ints, "select", call);
  return val_tensor(E, ir_select(elab_graph(E), c, x, y, call), call);
}

static Value *fire_size(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  Node *x = tensor_arg(E, b, a[0], call);
  int d = dim_arg(E, a[1]), r = x->shape.rank;
  int ax = d < 0 ? d + r : d;
  if (ax < 0 || ax >= r)
    ts_error(elab_ctx(E), a[1]->pos, "size: dim %d is out of range for a tensor of rank %d", d, r);
  return val_int(E, x->shape.d[ax].n, x->shape.d[ax].sym, false, call);
}

/* `layers n init f`: f takes the layer index and the carried value.  A
   step that takes one parameter but returns a function (fun l => fun h =>
   ...) is applied to the index, then to the value. */
void layers_check_step(Ctx *c, Pos at, const Callee *k) {
  int least, most;
  callee_arity(k, &least, &most);
  if ((most >= 2 || k->returns_fun) && least <= 2) return;
  const char *who = strcmp(k->name, "fun") ? arena_printf(c->arena, "'%s'", k->name) : "this 'fun'";
  int n = least > 2 ? least : most;
  ts_error(c, at, "'layers' passes its function two arguments, the layer index and the carried value, "
           "but %s %s %d parameter%s (%s): write 'fun l h => …'", who, least > 2 ? "needs" : "takes", n,
           n == 1 ? "" : "s", callee_param_names(c->arena, k));
}

static Value *fire_layers(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)b;
  Ctx *c = elab_ctx(E);
  if (a[0]->kind != V_INT || a[0]->i < 0)
    ts_error(c, ap[0], "the number of layers (the first argument of 'layers n init (fun l h => …)') must be a "
             "Nat, but this is %s", a[0]->kind == V_INT ? arena_printf(c->arena, "%lld", (long long)a[0]->i)
                                                         : value_kind_name(a[0]));
  Value *f = a[2];
  if (!value_is_fun(f))
    ts_error(c, ap[2], "the last argument of 'layers' must be a function (fun l h => …), but this is %s%s",
             value_kind_name(f), value_is_fun(a[1]) ? "; the function comes last: layers n init (fun l h => …)" : "");
  Callee k = value_callee(f);
  Pos at = f->fk == FN_LAMBDA ? f->pos : ap[2];
  layers_check_step(c, at, &k);
  int least, most;
  callee_arity(&k, &least, &most);
  Value *acc = a[1];
  for (int64_t i = 0; i < a[0]->i; i++) {
    Value *l = val_int(E, i, NULL, false, call);
    if (most >= 2) {
      acc = elab_apply2(E, f, l, acc, call);
      continue;
    }
    Value *g = elab_apply1(E, f, l, call);
    if (!value_is_fun(g)) {
      k.returns_fun = false; /* now known */
      layers_check_step(c, at, &k);
    }
    acc = elab_apply1(E, g, acc, call);
  }
  return acc;
}

static Value *fire_inf(Elab *E, const Builtin *b, Value **a, const Pos *ap, Pos call) {
  (void)ap;
  (void)a;
  return val_float(E, b->deflt[0] > 0 ? INFINITY : -INFINITY, call);
}

#define UNARY(n, o) {n, 1, {P("x")}, {0}, {0}, OP_##o, fire_unary}
#define BINARY(n, o) {n, 2, {P("a"), P("b")}, {0}, {0}, OP_##o, fire_binary}
#define REDUCE(n, o) {n, 2, {P("x"), P("dim")}, {0, 1}, {0, -1}, OP_##o, fire_reduce}

const Builtin builtins[] = {
    UNARY("exp", EXP),   UNARY("log", LOG),         UNARY("sqrt", SQRT), UNARY("rsqrt", RSQRT),
    UNARY("tanh", TANH), UNARY("erf", ERF),         UNARY("sigmoid", SIGMOID),
    UNARY("relu", RELU), UNARY("abs", ABS),         UNARY("cast", CAST),
    BINARY("max", MAX),  BINARY("min", MIN),
    REDUCE("sum", SUM),  REDUCE("amax", AMAX),      REDUCE("amin", AMIN),
    {"matmul", 2, {P("a"), P("b")}, {0}, {0}, OP_MATMUL, fire_matmul},
    {"transpose", 1, {P("a")}, {0}, {0}, OP_PERMUTE, fire_transpose},
    {"permute", 2, {P("x"), P("perm")}, {0}, {0}, OP_PERMUTE, fire_permute},
    {"reshape", 2, {P("x"), P("dims")}, {0}, {0}, OP_RESHAPE, fire_reshape},
    {"concat", 2, {P("xs"), P("dim")}, {0, 1}, {0, 0}, OP_CONCAT, fire_concat},
    {"slice", 4, {P("x"), P("lo"), P("hi"), P("dim")}, {0, 0, 0, 1}, {0, 0, 0, -1}, OP_SLICE, fire_slice},
    {"gather", 3, {P("x"), P("idx"), P("dim")}, {0, 0, 1}, {0, 0, -1}, OP_GATHER, fire_gather},
    {"iota", 1, {P("n")}, {0}, {0}, OP_IOTA, fire_iota},
    {"select", 3, {P("c"), P("a"), P("b")}, {0}, {0}, OP_SELECT, fire_select},
    {"size", 2, {P("x"), P("dim")}, {0, 1}, {0, -1}, OP_COUNT, fire_size},
    {"layers", 3, {P("n"), P("init"), P("f")}, {0}, {0}, OP_COUNT, fire_layers},
    {"inf", 0, {{0}}, {0}, {1}, OP_CONST, fire_inf},
    {"neginf", 0, {{0}}, {0}, {-1}, OP_CONST, fire_inf},
};
const int builtin_count = (int)(sizeof builtins / sizeof builtins[0]);

bool builtin_is_fold(const Builtin *b) { return b->fire == fire_layers; }

const Builtin *builtin_find(const char *name) {
  for (int i = 0; i < builtin_count; i++)
    if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
  return NULL;
}
