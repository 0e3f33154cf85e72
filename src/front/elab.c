/*
 * elab.c: elaboration, from the AST of the chosen entry to a graph.
 *
 * Elaboration is evaluation at compile time.  Values are naturals and
 * integers (sizes, dims, layer indices: exact int64 with a symbolic form such
 * as "H*D"), floats (compile-time scalars), lists, functions (a declaration,
 * a lambda or a builtin, possibly partially applied) and tensors (graph
 * nodes).  Applying a declaration inlines it: its parameters are checked
 * against their types, implicit parameters `{B : Nat}` `{s : Shape}` are
 * inferred by unifying the types with the arguments' shapes, defaults fill
 * missing optional parameters, and the body is evaluated in the new
 * environment.  Tensor operations go to the graph builder, which checks
 * shapes.  Scalar arithmetic is folded in double precision, except where the
 * fold would produce NaN, an infinity or -0.0: then the operation is kept in
 * the graph, so folding never changes what the program computes.
 *
 * Names resolve as in Lean: local bindings, then declarations that come
 * earlier in the file (so there is no recursion), then builtins; the rule
 * and its errors are resolve.c's, which has already checked every name of
 * the program when it was loaded.  Each call of
 * a declaration pushes an expansion frame, so errors inside the prelude also
 * point at the user's call.  A step budget and a depth limit bound the work,
 * so self-application and huge folds end with an error, never a hang.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "value.h"

/* ---- values ---- */

struct Elab {
  Ctx *c;
  Graph *g;
  const Program *prog;
  int eval_depth;
};

#define MAX_EVAL_DEPTH 3000

static Value *eval(Elab *E, const Ast *a, Env *env, int scope);
static Value *apply(Elab *E, Value *fn, Value **args, Pos *argpos, int nargs,
                    const char **names, Pos call);

static Value *new_value(Elab *E, VKind k, Pos p) {
  Value *v = arena_alloc(E->c->arena, sizeof *v);
  v->kind = k;
  v->pos = p;
  return v;
}

Value *val_int(Elab *E, int64_t i, const char *sym, bool is_int, Pos p) {
  Value *v = new_value(E, V_INT, p);
  v->i = i;
  v->sym = sym;
  v->is_int = is_int;
  return v;
}

Value *val_float(Elab *E, double f, Pos p) {
  Value *v = new_value(E, V_FLOAT, p);
  v->f = f;
  return v;
}

Value *val_tensor(Elab *E, Node *n, Pos p) {
  Value *v = new_value(E, V_TENSOR, p);
  v->node = n;
  return v;
}

static Env *env_bind(Elab *E, Env *env, const char *name, Value *v) {
  Env *e = arena_alloc(E->c->arena, sizeof *e);
  e->name = name;
  e->val = v;
  e->next = env;
  return e;
}

const char *value_kind_name(const Value *v) {
  switch (v->kind) {
  case V_INT: return v->is_int ? "an Int" : "a Nat";
  case V_FLOAT: return "a Float";
  case V_TENSOR:
    switch (v->node->kind) {
    case EK_REAL: return v->node->shape.rank ? "a tensor" : "a scalar tensor";
    case EK_INT: return "an Index tensor";
    case EK_BOOL: return "a boolean mask";
    }
    return "a tensor";
  case V_LIST: return "a list";
  case V_FUN: return "a function";
  }
  return "a value";
}

static const char *fn_name(const Value *f) {
  switch (f->fk) {
  case FN_DECL: return f->decl->name;
  case FN_BUILTIN: return f->bi->name;
  case FN_LAMBDA: return "fun";
  }
  return "?";
}

static const Binder *fn_params(const Value *f, int *n) {
  switch (f->fk) {
  case FN_DECL: *n = f->decl->nparams; return f->decl->params;
  case FN_LAMBDA: *n = f->lam->nparams; return f->lam->params;
  case FN_BUILTIN: *n = f->bi->nparams; return f->bi->params;
  }
  *n = 0;
  return NULL;
}

/* The first explicit parameter f still needs (no argument, no default),
   or -1 when f can be called. */
static int first_missing(const Value *f) {
  int np;
  const Binder *ps = fn_params(f, &np);
  for (int i = 0; i < np; i++)
    if (!ps[i].implicit && !f->bound[i] && !ps[i].deflt && !(f->fk == FN_BUILTIN && f->bi->has_default[i]))
      return i;
  return -1;
}

/* value_kind_name, and for a function applied to too few arguments the
   parameter it still needs (a partial application where a tensor was
   meant). */
static const char *kind_said(Elab *E, const Value *v) {
  int i = v->kind == V_FUN && v->bound ? first_missing(v) : -1;
  if (i < 0) return value_kind_name(v);
  int np;
  return arena_printf(E->c->arena, "a function: '%s' is applied without its argument '%s'", fn_name(v),
                      fn_params(v, &np)[i].name);
}

/* ---- symbolic sizes ---- */

static bool sym_is_atom(const char *s) {
  for (; *s; s++)
    if (strchr("+-*/^ ", *s)) return false;
  return true;
}

/* The symbolic form of `a op b`, or NULL when neither side has one. */
static const char *sym_binop(Elab *E, const Value *a, const char *op, const Value *b) {
  if (!a->sym && !b->sym) return NULL;
  char la[32], lb[32];
  const char *sa = a->sym, *sb = b->sym;
  if (!sa) snprintf(la, sizeof la, "%lld", (long long)a->i), sa = la;
  if (!sb) snprintf(lb, sizeof lb, "%lld", (long long)b->i), sb = lb;
  bool tight = strcmp(op, "*") == 0 || strcmp(op, "/") == 0 || strcmp(op, "^") == 0;
  bool pa = tight && !sym_is_atom(sa), pb = !sym_is_atom(sb) && (tight || strcmp(op, "-") == 0);
  return arena_printf(E->c->arena, "%s%s%s%s%s%s%s", pa ? "(" : "", sa, pa ? ")" : "", op,
                      pb ? "(" : "", sb, pb ? ")" : "");
}

/* ---- conversions ---- */

/* A scalar or tensor value as a graph node (numbers become constants; an
   integer becomes an integer constant when `want_int`). */
Node *as_node(Elab *E, Value *v, bool want_int, const char *what, Pos p) {
  switch (v->kind) {
  case V_TENSOR: return v->node;
  case V_INT: return want_int ? ir_const_int(E->g, v->i, v->pos) : ir_const(E->g, (double)v->i, v->pos);
  case V_FLOAT: return ir_const(E->g, v->f, v->pos);
  case V_LIST:
  case V_FUN: break;
  }
  if (what) ts_error(E->c, v->pos.file ? v->pos : p, "'%s' needs a tensor or a number here, but this is %s", what,
                     value_kind_name(v));
  ts_error(E->c, v->pos.file ? v->pos : p, "a tensor or a number is needed here, but this is %s", value_kind_name(v));
}

int64_t want_int(Elab *E, Value *v, const char *what) {
  if (v->kind != V_INT)
    ts_error(E->c, v->pos, "%s must be a whole number (Nat or Int), but this is %s", what,
             value_kind_name(v));
  return v->i;
}

/* ---- compile-time folding ---- */

/* A fold is safe when its result is an ordinary number: not NaN, not an
   infinity, not -0.0 (whose sign a later division would expose). */
static bool safe_fold(double r) { return isfinite(r) && !(r == 0 && signbit(r)); }

static double f_neg(double x) { return -x; }
static double f_rsqrt(double x) { return 1.0 / sqrt(x); }
static double f_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static double f_relu(double x) { return x > 0 ? x : 0.0; }
static double f_add(double a, double b) { return a + b; }
static double f_sub(double a, double b) { return a - b; }
static double f_mul(double a, double b) { return a * b; }
static double f_div(double a, double b) { return a / b; }
static double f_max(double a, double b) { return a > b ? a : b; }
static double f_min(double a, double b) { return a < b ? a : b; }

/* The scalar meaning of each foldable op; ops without an entry are never
   folded.  (The interpreter has its own copy of these semantics: the NumPy
   cross-check compares both with NumPy.) */
static double (*const fold_unary[OP_COUNT])(double) = {
    [OP_NEG] = f_neg,   [OP_EXP] = exp,         [OP_LOG] = log,       [OP_SQRT] = sqrt,
    [OP_RSQRT] = f_rsqrt, [OP_TANH] = tanh,     [OP_ERF] = erf,       [OP_SIGMOID] = f_sigmoid,
    [OP_RELU] = f_relu, [OP_ABS] = fabs,
};
static double (*const fold_binary[OP_COUNT])(double, double) = {
    [OP_ADD] = f_add, [OP_SUB] = f_sub, [OP_MUL] = f_mul, [OP_DIV] = f_div,
    [OP_POW] = pow,   [OP_MAX] = f_max, [OP_MIN] = f_min,
};

static bool is_number(const Value *v) { return v->kind == V_INT || v->kind == V_FLOAT; }
static double num(const Value *v) { return v->kind == V_INT ? (double)v->i : v->f; }

Value *do_unary(Elab *E, Op op, Value *a, Pos p) {
  if (a->kind == V_INT && op == OP_NEG) {
    if (a->i == INT64_MIN) ts_error(E->c, p, "integer overflow");
    Value *r = val_int(E, -a->i, NULL, true, p);
    if (a->sym) r->sym = arena_printf(E->c->arena, sym_is_atom(a->sym) ? "-%s" : "-(%s)", a->sym);
    return r;
  }
  if (a->kind == V_INT && (op == OP_ABS || op == OP_RELU)) {
    int64_t r = a->i < 0 ? (op == OP_ABS ? -a->i : 0) : a->i;
    if (a->i == INT64_MIN) ts_error(E->c, p, "integer overflow");
    return val_int(E, r, a->sym, a->is_int && op == OP_ABS ? false : a->is_int, p);
  }
  if (is_number(a) && fold_unary[op]) {
    double r = fold_unary[op](num(a));
    if (safe_fold(r)) return val_float(E, r, p);
  }
  if (op == OP_CAST && is_number(a)) return a->kind == V_INT ? val_float(E, (double)a->i, p) : a;
  return val_tensor(E, ir_unary(E->g, op, as_node(E, a, false, op_info[op].name, p), p), p);
}

static void checked(Elab *E, bool overflow, Pos p) {
  if (overflow) ts_error(E->c, p, "integer overflow in size arithmetic");
}

static Value *int_binop(Elab *E, const char *op, Value *a, Value *b, Pos p) {
  int64_t x = a->i, y = b->i, r = 0;
  bool is_int = a->is_int || b->is_int;
  switch (op[0]) {
  case '+': checked(E, __builtin_add_overflow(x, y, &r), p); break;
  case '-':
    checked(E, __builtin_sub_overflow(x, y, &r), p);
    if (!is_int && r < 0) r = 0; /* Nat subtraction truncates, as in Lean */
    break;
  case '*': checked(E, __builtin_mul_overflow(x, y, &r), p); break;
  case '/':
    if (y == 0) ts_error(E->c, p, "division by zero in size arithmetic");
    if (x == INT64_MIN && y == -1) ts_error(E->c, p, "integer overflow in size arithmetic");
    r = x / y;
    break;
  case '^':
    if (y < 0) ts_error(E->c, p, "negative exponent in integer arithmetic");
    r = 1;
    for (int64_t k = 0; k < y; k++) {
      checked(E, __builtin_mul_overflow(r, x, &r), p);
      if (r == 0 || r == 1) break;
    }
    break;
  default: return NULL;
  }
  return val_int(E, r, sym_binop(E, a, op, b), is_int, p);
}

static Op binop_op(const char *op) {
  static const struct { const char *s; Op op; } t[] = {
      {"+", OP_ADD}, {"-", OP_SUB}, {"*", OP_MUL}, {"/", OP_DIV}, {"^", OP_POW},
      {"<", OP_LT},  {"≤", OP_LE},  {">", OP_GT},  {"≥", OP_GE},  {"==", OP_EQ}, {"≠", OP_NE},
      {"⬝", OP_MATMUL}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strcmp(t[i].s, op) == 0) return t[i].op;
  return OP_COUNT;
}

Value *do_binary(Elab *E, Op op, const char *spelling, Value *a, Value *b, Pos p) {
  if (op == OP_MATMUL) {
    Node *x = as_node(E, a, false, "⬝", p), *y = as_node(E, b, false, "⬝", p);
    return val_tensor(E, ir_matmul(E->g, x, y, p), p);
  }
  bool arith = op_info[op].cls == OPC_BINARY;
  if (arith && a->kind == V_INT && b->kind == V_INT && op != OP_MAX && op != OP_MIN) {
    Value *r = int_binop(E, spelling, a, b, p);
    if (r) return r;
  }
  if (arith && a->kind == V_INT && b->kind == V_INT) /* max, min */
    return (op == OP_MAX) == (a->i >= b->i) ? a : b;
  if (arith && is_number(a) && is_number(b) && fold_binary[op]) {
    double r = fold_binary[op](num(a), num(b));
    if (safe_fold(r)) return val_float(E, r, p);
  }
  bool abool = a->kind == V_TENSOR && a->node->kind == EK_BOOL;
  bool bbool = b->kind == V_TENSOR && b->node->kind == EK_BOOL;
  if (arith && (abool || bbool))
    ts_error(E->c, p, "'%s' needs numeric operands, but %s a boolean mask; use 'cast' or 'select'",
             spelling, abool && bbool ? "both are" : abool ? "the left one is" : "the right one is");
  /* a Nat beside an Index stays an integer constant */
  bool ai = a->kind == V_TENSOR && a->node->kind == EK_INT;
  bool bi = b->kind == V_TENSOR && b->node->kind == EK_INT;
  Node *x = as_node(E, a, bi, spelling, p), *y = as_node(E, b, ai, spelling, p);
  /* integers divide as Lean's Int does (Euclidean: rounding down for a
     positive divisor, x / 0 = 0): its own op, which no real rewrite touches */
  if (op == OP_DIV && x->kind == EK_INT && y->kind == EK_INT) op = OP_IDIV;
  return val_tensor(E, ir_binary(E->g, op, x, y, p), p);
}

/* ---- types ---- */

/* What a type check is about, formatted only when it fails (checks are hot;
   their messages are rare). */
typedef struct Subject { const char *fmt, *a, *b; } Subject;

static const char *subject_str(Elab *E, const Subject *s) {
  return arena_printf(E->c->arena, s->fmt, s->a, s->b);
}

static const char *type_name(TypeKind k) {
  switch (k) {
  case TY_NAT: return "Nat";
  case TY_INT: return "Int";
  case TY_FLOAT: return "Float";
  case TY_TENSOR: return "Tensor";
  case TY_PARAM: return "Param";
  case TY_INDEX: return "Index";
  case TY_SHAPE: return "Shape";
  case TY_LIST: return "List";
  case TY_ARROW: return "a function";
  }
  return "?";
}

/* Evaluate a dimension expression to a Nat. */
static Value *eval_dim(Elab *E, const Ast *d, Env *env, int scope) {
  Value *v = eval(E, d, env, scope);
  if (v->kind != V_INT || v->i < 0)
    ts_error(E->c, d->pos, "a dimension must be a Nat, but this is %s",
             v->kind == V_INT ? "negative" : value_kind_name(v));
  return v;
}

static bool is_unbound_implicit(Env *env, const Ast *d) {
  if (d->kind != AST_VAR) return false;
  Env *e = env_find(env, d->name);
  return e && !e->val;
}

/* The shape a type's dimension list denotes (all dims must be known). */
bool type_shape(Elab *E, const TypeAst *t, Env *env, int scope, Shape *out) {
  if (t->shapevar) {
    Env *e = env_find(env, t->shapevar);
    if (!e || !e->val) return false;
    Value *l = e->val;
    if (l->kind != V_LIST || l->n > TS_MAX_RANK)
      ts_error(E->c, t->pos, "'%s' is not a shape", t->shapevar);
    out->rank = l->n;
    for (int i = 0; i < l->n; i++) {
      if (l->items[i]->kind != V_INT) ts_error(E->c, t->pos, "'%s' is not a shape", t->shapevar);
      out->d[i] = (Dim){l->items[i]->i, l->items[i]->sym};
    }
    return true;
  }
  if (t->ndims > TS_MAX_RANK) ts_error(E->c, t->pos, "tensors have at most %d dimensions", TS_MAX_RANK);
  out->rank = t->ndims;
  for (int i = 0; i < t->ndims; i++) {
    if (is_unbound_implicit(env, t->dims[i])) return false;
    Value *v = eval_dim(E, t->dims[i], env, scope);
    out->d[i] = (Dim){v->i, v->sym};
  }
  return true;
}

static void type_error_shape(Elab *E, const Subject *subj, const Shape *want, const Shape *got, int dim,
                             Pos p) {
  char a[256], b[256];
  const char *what = subject_str(E, subj);
  if (want->rank != got->rank)
    ts_error(E->c, p, "%s has shape %s (rank %d), but %s is expected (rank %d)", what,
             shape_str(got, b, sizeof b), got->rank, shape_str(want, a, sizeof a), want->rank);
  ts_error(E->c, p, "%s has shape %s, but %s is expected: dimension %d is %lld, not %lld%s%s", what,
           shape_str(got, b, sizeof b), shape_str(want, a, sizeof a), dim, (long long)got->d[dim].n,
           (long long)want->d[dim].n, want->d[dim].sym ? " = " : "",
           want->d[dim].sym ? want->d[dim].sym : "");
}

/* Unify the dims of type t with the concrete shape s, binding implicits in
   *env; report a mismatch at p. */
static void unify_shape(Elab *E, const TypeAst *t, const Shape *s, Env *env, int scope,
                        const Subject *what, Pos p) {
  if (t->shapevar) {
    Env *e = env_find(env, t->shapevar);
    if (!e) name_unknown_shape(E->c, t->shapevar_pos.file ? t->shapevar_pos : t->pos, t->shapevar, env);
    if (!e->val) {
      Value *l = new_value(E, V_LIST, p);
      l->n = s->rank;
      l->items = arena_alloc(E->c->arena, sizeof(Value *) * (size_t)(s->rank ? s->rank : 1));
      for (int i = 0; i < s->rank; i++) l->items[i] = val_int(E, s->d[i].n, s->d[i].sym, false, p);
      e->val = l;
      return;
    }
  } else if (t->ndims == s->rank) {
    /* first bind the dims that are a bare implicit name */
    for (int i = 0; i < t->ndims; i++) {
      if (!is_unbound_implicit(env, t->dims[i])) continue;
      Env *e = env_find(env, t->dims[i]->name);
      e->val = val_int(E, s->d[i].n, s->d[i].sym ? s->d[i].sym : e->name, false, p);
    }
  }
  Shape want;
  if (!type_shape(E, t, env, scope, &want))
    ts_error(E->c, t->pos, "cannot infer the shape of %s from this type", subject_str(E, what));
  if (want.rank != s->rank) type_error_shape(E, what, &want, s, 0, p);
  for (int i = 0; i < s->rank; i++)
    if (want.d[i].n != s->d[i].n) type_error_shape(E, what, &want, s, i, p);
}

/* Check (and convert) value v for a parameter of type t. */
static Value *check_type(Elab *E, Value *v, const TypeAst *t, Env *env, int scope, const Subject *subj,
                         Pos p) {
  if (!t) return v;
#define what subject_str(E, subj)
  switch (t->kind) {
  case TY_NAT:
  case TY_INT:
    if (v->kind != V_INT)
      ts_error(E->c, p, "%s must be %s, but this is %s", what, type_name(t->kind), value_kind_name(v));
    if (t->kind == TY_NAT && v->i < 0)
      ts_error(E->c, p, "%s must be a Nat, but this is %lld", what, (long long)v->i);
    return v;
  case TY_FLOAT:
    if (v->kind == V_INT) return val_float(E, (double)v->i, v->pos);
    if (v->kind == V_FLOAT) return v;
    if (v->kind == V_TENSOR && v->node->shape.rank == 0 && v->node->kind == EK_REAL) return v;
    ts_error(E->c, p, "%s must be a Float, but this is %s", what, value_kind_name(v));
  case TY_TENSOR:
  case TY_PARAM:
  case TY_INDEX: {
    if (is_number(v) && t->kind != TY_INDEX) v = val_tensor(E, as_node(E, v, false, NULL, p), v->pos);
    if (v->kind != V_TENSOR)
      ts_error(E->c, p, "%s must be %s %s, but this is %s", what, t->kind == TY_INDEX ? "an" : "a",
               type_name(t->kind), kind_said(E, v));
    if (t->kind == TY_INDEX && v->node->kind != EK_INT)
      ts_error(E->c, p, "%s must be an Index tensor (integers), but this is %s", what, value_kind_name(v));
    if (t->kind != TY_INDEX && v->node->kind == EK_INT)
      v = val_tensor(E, ir_unary(E->g, OP_CAST, v->node, p), v->pos);
    unify_shape(E, t, &v->node->shape, env, scope, subj, p);
    return v;
  }
  case TY_SHAPE:
    if (v->kind != V_LIST) ts_error(E->c, p, "%s must be a list of Nats, but this is %s", what, value_kind_name(v));
    for (int i = 0; i < v->n; i++)
      if (v->items[i]->kind != V_INT || v->items[i]->i < 0)
        ts_error(E->c, v->items[i]->pos, "%s must be a list of Nats; this entry is not a Nat", what);
    return v;
  case TY_LIST:
    if (v->kind != V_LIST) ts_error(E->c, p, "%s must be a list, but this is %s", what, value_kind_name(v));
    for (int i = 0; i < v->n; i++) v->items[i] = check_type(E, v->items[i], t->elem, env, scope, subj, v->items[i]->pos);
    return v;
  case TY_ARROW:
    if (v->kind != V_FUN) ts_error(E->c, p, "%s must be a function, but this is %s", what, value_kind_name(v));
    return v;
  }
  return v;
#undef what
}

/* ---- names ---- */

static const Decl *find_decl(const Program *prog, const char *name, int scope, int *index) {
  return program_lookup(prog, name, scope, index);
}

static Value *fn_value(Elab *E, FnKind fk, Pos p) {
  Value *v = new_value(E, V_FUN, p);
  v->fk = fk;
  return v;
}

static void push_frame(Elab *E, const char *name, Pos call) {
  Ctx *c = E->c;
  if (c->depth >= c->max_depth)
    ts_error(c, call, "calls are nested more than %d levels deep; is a function applied to itself?", c->max_depth);
  c->frames[c->depth % 64].call = call;
  c->frames[c->depth % 64].name = name;
  c->depth++;
}

static void pop_frame(Elab *E) {
  E->c->depth--;
}

/* Evaluate a declaration with no parameters (a constant or an instance). */
static Value *eval_const_decl(Elab *E, const Decl *d, int index, Pos call, bool frame) {
  if (frame) push_frame(E, d->name, call);
  Pos save_site = E->g->cur_site;
  const char *save_via = E->g->cur_via;
  if (call.file && !call.file->is_prelude) E->g->cur_site = call;
  E->g->cur_via = d->name;
  Value *v = eval(E, d->body, NULL, index);
  Subject subj = {"the value of '%s'%s", d->name, ""};
  if (d->ret) v = check_type(E, v, d->ret, NULL, index, &subj, d->body->pos);
  E->g->cur_site = save_site;
  E->g->cur_via = save_via;
  if (frame) pop_frame(E);
  return v;
}

static Value *lookup(Elab *E, const Ast *a, Env *env, int scope) {
  name_check_projection(E->c, a->pos, a->name, env);
  Name n = name_resolve(E->prog, a->name, env, scope);
  switch (n.kind) {
  case NAME_LOCAL:
    if (!n.local->val)
      ts_error(E->c, a->pos, "'%s' is an implicit parameter that is only known once the arguments "
               "are matched; it cannot be used in a default value", a->name);
    return n.local->val;
  case NAME_DECL: {
    if (n.decl->nparams == 0) return eval_const_decl(E, n.decl, n.index, a->pos, true);
    Value *f = fn_value(E, FN_DECL, a->pos);
    f->decl = n.decl;
    f->decl_index = n.index;
    return f;
  }
  case NAME_BUILTIN: {
    const Builtin *b = n.builtin;
    if (b->nparams == 0) return b->fire(E, b, NULL, NULL, a->pos);
    Value *f = fn_value(E, FN_BUILTIN, a->pos);
    f->bi = b;
    return f;
  }
  case NAME_NONE: break;
  }
  name_unknown(E->c, E->prog, a->pos, a->name, env, scope);
}

/* ---- application ---- */

/* Fire a fully applied function.  `frame`: record the call as an expansion
   frame for error notes (not for the entry itself, which is the user's
   starting point). */
static Value *fire(Elab *E, Value *f, Pos call, bool frame) {
  int np;
  const Binder *ps = fn_params(f, &np);
  const char *fname = fn_name(f);
  if (f->fk == FN_BUILTIN) {
    for (int i = 0; i < np; i++)
      if (!f->bound[i]) f->bound[i] = val_int(E, f->bi->deflt[i], NULL, true, call), f->bound_pos[i] = call;
    return f->bi->fire(E, f->bi, f->bound, f->bound_pos, call);
  }
  int scope = f->decl_index;
  Env *env = f->fk == FN_LAMBDA ? f->env : NULL;
  /* implicits first: the given ones (by name, or from --size) are bound, the
     others are names waiting to be inferred; then each parameter in order */
  for (int i = 0; i < np; i++) {
    if (!ps[i].implicit) continue;
    Value *v = NULL;
    if (f->bound[i]) {
      Subject iw = {"'%s'%s", ps[i].name, ""};
      v = check_type(E, f->bound[i], ps[i].type, env, scope, &iw, f->bound_pos[i]);
    }
    env = env_bind(E, env, ps[i].name, v);
  }
  for (int i = 0; i < np; i++) {
    Value *v = f->bound[i];
    if (ps[i].implicit) continue;
    Subject what = {"argument '%s' of '%s'", ps[i].name, fname};
    if (!v && !ps[i].deflt) ts_error(E->c, call, "missing argument '%s' of '%s'", ps[i].name, fname);
    if (!v) {
      v = eval(E, ps[i].deflt, env, scope);
      Subject dw = {"the default of '%s'%s", ps[i].name, ""};
      v = check_type(E, v, ps[i].type, env, scope, &dw, ps[i].deflt->pos);
    } else {
      v = check_type(E, v, ps[i].type, env, scope, &what, f->bound_pos[i]);
    }
    if (v->kind == V_INT && !v->sym && ps[i].type && (ps[i].type->kind == TY_NAT))
      v = val_int(E, v->i, ps[i].name, v->is_int, v->pos);
    env = env_bind(E, env, ps[i].name, v);
  }
  for (int i = 0; i < np; i++)
    if (ps[i].implicit && !env_find(env, ps[i].name)->val)
      ts_error(E->c, call, "cannot infer the implicit parameter '%s' of '%s' from the arguments", ps[i].name,
               fname);
  if (frame) push_frame(E, fname, call);
  Pos save_site = E->g->cur_site;
  const char *save_via = E->g->cur_via;
  if (call.file && !call.file->is_prelude) E->g->cur_site = call;
  E->g->cur_via = fname;
  const Ast *body = f->fk == FN_DECL ? f->decl->body : f->lam->a;
  Value *r = eval(E, body, env, scope);
  {
    Subject rw = {"the result of '%s'%s", fname, ""};
    /* the caret under the expression that gives the result, past the lets */
    const Ast *res = body;
    while (res->kind == AST_LET && res->b) res = res->b;
    if (f->fk == FN_DECL && f->decl->ret) r = check_type(E, r, f->decl->ret, env, scope, &rw, res->pos);
  }
  E->g->cur_site = save_site;
  E->g->cur_via = save_via;
  if (frame) pop_frame(E);
  return r;
}

static Value *copy_fn(Elab *E, Value *f) {
  int np;
  fn_params(f, &np);
  Value *g = new_value(E, V_FUN, f->pos);
  *g = *f;
  size_t n = (size_t)(np ? np : 1);
  g->bound = arena_alloc(E->c->arena, sizeof(Value *) * n);
  g->bound_pos = arena_alloc(E->c->arena, sizeof(Pos) * n);
  if (f->bound) {
    memcpy(g->bound, f->bound, sizeof(Value *) * n);
    memcpy(g->bound_pos, f->bound_pos, sizeof(Pos) * n);
  }
  return g;
}

static bool ready(const Value *f) { return first_missing(f) < 0; }

static Value *apply(Elab *E, Value *fn, Value **args, Pos *argpos, int nargs, const char **names, Pos call) {
  ts_step(E->c, call);
  if (fn->kind != V_FUN) {
    ts_error(E->c, call, "%s is not a function; it cannot be applied to arguments", value_kind_name(fn));
  }
  Value *f = copy_fn(E, fn);
  int np;
  const Binder *ps = fn_params(f, &np);
  Callee callee = value_callee(fn);
  /* named arguments */
  for (int k = 0; k < nargs; k++) {
    if (!names || !names[k]) continue;
    int i = callee_param(E->c, argpos[k], &callee, names[k]);
    if (f->bound[i]) callee_given_twice(E->c, argpos[k], &callee, names[k]);
    f->bound[i] = args[k];
    f->bound_pos[i] = argpos[k];
  }
  /* positional arguments fill the explicit parameters in order */
  int next = 0;
  for (int k = 0; k < nargs; k++) {
    if (names && names[k]) continue;
    while (next < np && (ps[next].implicit || f->bound[next])) next++;
    if (next == np) {
      /* all parameters are taken: apply the result to the rest */
      Value *r = fire(E, f, call, true);
      int rest = 0;
      for (int j = k; j < nargs; j++) rest += !(names && names[j]);
      if (r->kind != V_FUN) {
        callee.bound = NULL; /* count every explicit parameter */
        callee_too_many(E->c, argpos[k], &callee, value_kind_name(r));
      }
      Value **ra = arena_alloc(E->c->arena, sizeof(Value *) * (size_t)rest);
      Pos *rp = arena_alloc(E->c->arena, sizeof(Pos) * (size_t)rest);
      int m = 0;
      for (int j = k; j < nargs; j++)
        if (!(names && names[j])) ra[m] = args[j], rp[m++] = argpos[j];
      return apply(E, r, ra, rp, m, NULL, call);
    }
    f->bound[next] = args[k];
    f->bound_pos[next] = argpos[k];
  }
  /* a function whose required parameters are all bound fires at once (but a
     function with no explicit parameters left at all only when applied) */
  if (ready(f)) return fire(E, f, call, true);
  return f;
}

Value *elab_apply1(Elab *E, Value *fn, Value *a, Pos call) {
  Pos pos = a->pos;
  return apply(E, fn, &a, &pos, 1, NULL, call);
}

Value *elab_apply2(Elab *E, Value *fn, Value *a, Value *b, Pos call) {
  Value *args[2] = {a, b};
  Pos pos[2] = {a->pos, b->pos};
  return apply(E, fn, args, pos, 2, NULL, call);
}

Callee value_callee(const Value *f) {
  Callee k = {0};
  switch (f->fk) {
  case FN_DECL: k = callee_decl(f->decl); break;
  case FN_BUILTIN: k = callee_builtin(f->bi); break;
  case FN_LAMBDA: k = callee_lambda(f->lam); break;
  }
  k.bound = f->bound;
  return k;
}

Graph *elab_graph(Elab *E) { return E->g; }
Ctx *elab_ctx(Elab *E) { return E->c; }
bool value_is_fun(const Value *v) { return v->kind == V_FUN; }
const char *value_sym(const Value *v) { return v->kind == V_INT ? v->sym : NULL; }

Value **want_list(Elab *E, Value *v, const char *what, int *n) {
  if (v->kind != V_LIST) ts_error(E->c, v->pos, "%s must be a list [a, b, ...], but this is %s", what, value_kind_name(v));
  *n = v->n;
  return v->items;
}

/* ---- evaluation ---- */

static Value *eval_app(Elab *E, const Ast *a, Env *env, int scope) {
  Value *fn = eval(E, a->a, env, scope);
  Value **args = arena_alloc(E->c->arena, sizeof(Value *) * (size_t)(a->nargs ? a->nargs : 1));
  Pos *pos = arena_alloc(E->c->arena, sizeof(Pos) * (size_t)(a->nargs ? a->nargs : 1));
  for (int i = 0; i < a->nargs; i++) {
    args[i] = eval(E, a->args[i], env, scope);
    pos[i] = a->args[i]->pos;
  }
  return apply(E, fn, args, pos, a->nargs, a->argnames, a->a->pos);
}

static Value *eval_index(Elab *E, const Ast *a, Env *env, int scope) {
  Value *base = eval(E, a->a, env, scope);
  Value *iv = eval(E, a->b, env, scope);
  int64_t i = want_int(E, iv, "an index");
  if (base->kind == V_LIST) {
    if (i < 0 || i >= base->n)
      ts_error(E->c, a->b->pos, "index %lld is out of range for a list of %d", (long long)i, base->n);
    return base->items[i];
  }
  if (base->kind != V_TENSOR || base->node->shape.rank == 0)
    ts_error(E->c, a->pos, "only a tensor of rank at least 1 (a stacked parameter) can be indexed, "
             "but this is %s", value_kind_name(base));
  Node *x = base->node;
  if (i < 0 || i >= x->shape.d[0].n)
    ts_error(E->c, a->b->pos, "index %lld is out of range: the leading dimension has size %lld",
             (long long)i, (long long)x->shape.d[0].n);
  Node *s = ir_slice(E->g, x, 0, i, i + 1, a->pos);
  Shape sh = x->shape;
  sh.rank--;
  memmove(sh.d, sh.d + 1, sizeof(Dim) * (size_t)sh.rank);
  return val_tensor(E, ir_reshape(E->g, s, &sh, a->pos), a->pos);
}

static Value *eval(Elab *E, const Ast *a, Env *env, int scope) {
  ts_step(E->c, a->pos);
  if (++E->eval_depth > MAX_EVAL_DEPTH)
    ts_error(E->c, a->pos, "expression nested more than %d levels deep", MAX_EVAL_DEPTH);
  Value *r = NULL;
  switch (a->kind) {
  case AST_NAT: r = val_int(E, a->nat, NULL, false, a->pos); break;
  case AST_FLOAT: r = val_float(E, a->fnum, a->pos); break;
  case AST_STR:
    ts_error(E->c, a->pos, "a string is not a value in tilesmith programs");
  case AST_VAR: r = lookup(E, a, env, scope); break;
  case AST_PAREN: r = eval(E, a->a, env, scope); break;
  case AST_APP: r = eval_app(E, a, env, scope); break;
  case AST_BINOP: {
    Op op = binop_op(a->name);
    if (op == OP_COUNT) ts_error(E->c, a->pos, "unknown operator '%s'", a->name);
    Value *x = eval(E, a->a, env, scope);
    Value *y = eval(E, a->b, env, scope);
    r = do_binary(E, op, a->name, x, y, a->pos);
    break;
  }
  case AST_NEG: r = do_unary(E, OP_NEG, eval(E, a->a, env, scope), a->pos); break;
  case AST_TRANSPOSE: {
    Value *x = eval(E, a->a, env, scope);
    r = val_tensor(E, ir_transpose(E->g, as_node(E, x, false, "ᵀ", a->pos), a->pos), a->pos);
    break;
  }
  case AST_INDEX: r = eval_index(E, a, env, scope); break;
  case AST_LIST:
    r = new_value(E, V_LIST, a->pos);
    r->n = a->nargs;
    r->items = arena_alloc(E->c->arena, sizeof(Value *) * (size_t)(a->nargs ? a->nargs : 1));
    for (int i = 0; i < a->nargs; i++) r->items[i] = eval(E, a->args[i], env, scope);
    break;
  case AST_LET: {
    Value *v = eval(E, a->a, env, scope);
    Subject lw = {"'%s'%s", a->name, ""};
    if (a->type) v = check_type(E, v, a->type, env, scope, &lw, a->a->pos);
    r = eval(E, a->b, env_bind(E, env, a->name, v), scope);
    break;
  }
  case AST_FUN:
    r = fn_value(E, FN_LAMBDA, a->pos);
    r->lam = a;
    r->env = env;
    r->decl_index = scope;
    break;
  }
  E->eval_depth--;
  return r;
}

/* ---- entry ---- */

static Value *entry_arg(Elab *E, const Value *f, int i, Env *env, SizeArg *sizes, int nsizes, Pos p) {
  int np;
  const Binder *ps = fn_params(f, &np);
  const Binder *b = &ps[i];
  const char *fname = fn_name(f);
  TypeKind k = b->type ? b->type->kind : TY_ARROW;
  for (int s = 0; s < nsizes; s++)
    if (strcmp(sizes[s].name, b->name) == 0) {
      if (k != TY_NAT && k != TY_INT)
        ts_fatal(E->c, "--size %s: '%s' is a %s parameter of '%s', not a Nat", b->name, b->name,
                 type_name(k), fname);
      sizes[s].used = true;
      return val_int(E, sizes[s].value, b->name, k == TY_INT, b->pos);
    }
  switch (k) {
  case TY_NAT:
  case TY_INT:
    if (b->implicit) return NULL;
    ts_fatal(E->c, "the entry '%s' needs a value for its %s parameter '%s': pass --size %s=...", E->g->entry,
             type_name(k), b->name, b->name);
  case TY_TENSOR:
  case TY_PARAM:
  case TY_INDEX: {
    if (b->implicit) break;
    Shape s;
    if (!type_shape(E, b->type, env, f->decl_index, &s))
      ts_error(E->c, b->pos, "the shape of the entry's input '%s' depends on an implicit parameter; "
               "give the entry a concrete type or bind it with --size", b->name);
    InputRole role = k == TY_PARAM ? ROLE_PARAM : k == TY_INDEX ? ROLE_INDEX : ROLE_TENSOR;
    return val_tensor(E, ir_input(E->g, b->name, role, &s, b->pos), b->pos);
  }
  case TY_FLOAT:
    if (b->deflt) return NULL;
    break;
  case TY_SHAPE:
  case TY_LIST:
  case TY_ARROW:
    if (b->implicit) return NULL;
    break;
  }
  ts_error(E->c, b->pos, "the entry '%s' cannot take its parameter '%s' from the command line "
           "(only Nat sizes and tensors can be supplied)", E->g->entry, b->name);
  (void)p;
}

/* The entry's value: a constant or instance evaluated, or the function of a
   definition with parameters; an unknown name is an error with a suggestion. */
static Value *entry_value(Elab *E, const char *entry, const Decl **out) {
  int index;
  const Decl *d = find_decl(E->prog, entry, E->prog->ndecls, &index);
  if (!d) entry_unknown(E->c, E->prog, entry);
  *out = d;
  if (d->nparams == 0) return eval_const_decl(E, d, index, d->pos, false);
  Value *v = fn_value(E, FN_DECL, d->pos);
  v->decl = d;
  v->decl_index = index;
  return v;
}

Graph *elab_entry(Ctx *c, const Program *prog, const char *entry, Pos entry_pos, SizeArg *sizes, int nsizes) {
  Elab E = {.c = c, .prog = prog};
  E.g = graph_new(c);
  E.g->entry = entry;
  E.g->entry_pos = entry_pos;
  const Decl *d;
  Value *v = entry_value(&E, entry, &d);
  /* supply the entry's remaining parameters from --size and as inputs */
  if (v->kind == V_FUN) {
    Value *f = copy_fn(&E, v);
    int np;
    const Binder *ps = fn_params(f, &np);
    Env *env = f->fk == FN_LAMBDA ? f->env : NULL;
    for (int i = 0; i < np; i++) {
      /* --size may also override a size a concrete instance fixed
         (attention_4k with --size N=128), which is how verify shrinks it */
      if (f->bound[i] && ps[i].type && (ps[i].type->kind == TY_NAT || ps[i].type->kind == TY_INT))
        for (int k = 0; k < nsizes; k++)
          if (!strcmp(sizes[k].name, ps[i].name)) {
            f->bound[i] = val_int(&E, sizes[k].value, ps[i].name, ps[i].type->kind == TY_INT, f->bound_pos[i]);
            sizes[k].used = true;
          }
      if (f->bound[i]) {
        Subject bw = {"'%s'%s", ps[i].name, ""};
        env = env_bind(&E, env, ps[i].name, check_type(&E, f->bound[i], ps[i].type, env, f->decl_index, &bw, f->bound_pos[i]));
        if (env->val->kind == V_INT && !env->val->sym) env->val = val_int(&E, env->val->i, ps[i].name, env->val->is_int, env->val->pos);
        f->bound[i] = env->val;
        continue;
      }
      Value *a = entry_arg(&E, f, i, env, sizes, nsizes, d->pos);
      if (a) {
        f->bound[i] = a;
        f->bound_pos[i] = ps[i].pos;
        env = env_bind(&E, env, ps[i].name, a);
      } else if (ps[i].implicit) {
        env = env_bind(&E, env, ps[i].name, NULL);
      } else if (ps[i].deflt) {
        env = env_bind(&E, env, ps[i].name, eval(&E, ps[i].deflt, env, f->decl_index));
      }
    }
    v = fire(&E, f, d->pos, false);
  }
  for (int s = 0; s < nsizes; s++)
    if (!sizes[s].used)
      ts_fatal(c, "--size %s: the entry '%s' has no Nat parameter named '%s' left to bind", sizes[s].name,
               entry, sizes[s].name);
  if (v->kind == V_FUN)
    ts_error(c, d->pos, "the entry '%s' evaluates to a function that still expects arguments", entry);
  if (v->kind == V_LIST) ts_error(c, d->pos, "the entry '%s' evaluates to a list, not a tensor", entry);
  E.g->output = as_node(&E, v, v->kind == V_INT, NULL, d->pos);
#ifdef TS_DEBUG
  if (!graph_check(E.g, stderr)) abort();
#endif
  return E.g;
}

void elab_print_signature(FILE *out, const Graph *g, const char *entry) {
  char buf[512];
  fprintf(out, "%s", entry);
  for (int i = 0; i < g->ninputs; i++) {
    const Node *n = g->inputs[i];
    const char *t = n->role == ROLE_PARAM ? "Param" : n->role == ROLE_INDEX ? "Index" : "Tensor";
    fprintf(out, "\n    (%s : %s %s)", n->name, t, shape_str(&n->shape, buf, sizeof buf));
  }
  const Node *o = g->output;
  const char *t = o->kind == EK_INT ? "Index" : o->kind == EK_BOOL ? "Mask" : "Tensor";
  fprintf(out, "\n    : %s %s\n", t, shape_str(&o->shape, buf, sizeof buf));
}

/* The Nat (and Int) parameters of an entry, for verify's shrinking: the
   ones a concrete instance fixed (value >= 0) and the ones --size must bind
   (value -1), in parameter order.  Implicit ones are inferred, not listed. */
int elab_entry_nats(Ctx *c, const Program *prog, const char *entry, SizeArg *out, int max) {
  Elab E = {.c = c, .prog = prog};
  E.g = graph_new(c);
  E.g->entry = entry;
  int n = 0;
  const Decl *d;
  Value *v = entry_value(&E, entry, &d);
  if (v->kind != V_FUN) return 0;
  int np;
  const Binder *ps = fn_params(v, &np);
  for (int i = 0; i < np && n < max; i++) {
    if (ps[i].implicit || !ps[i].type || (ps[i].type->kind != TY_NAT && ps[i].type->kind != TY_INT)) continue;
    const Value *b = v->bound ? v->bound[i] : NULL;
    if (b && b->kind != V_INT) continue;
    out[n++] = (SizeArg){ps[i].name, b ? b->i : -1, false};
  }
  return n;
}
