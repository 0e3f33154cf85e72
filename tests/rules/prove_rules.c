/* prove_rules.c: every rewrite rule proven with Z3 over the reals, at small
 * concrete shapes.
 *
 * For each rule of src/rewrite/rules.def, rule_instances gives varied small
 * instances where the rule applies (the lhs and rhs well-formed with one
 * shape, the condition true).  Each input element is a Z3 variable (a real;
 * an integer in [0, bound) for a gather index; positive where a positive()
 * condition asks).  Both sides are evaluated elementwise as Z3 terms: sums
 * and matrix products as explicit sums over the small axes, select, max,
 * min, relu, abs and the comparisons with ite, exp/log/sqrt/rsqrt/tanh/erf/
 * sigmoid/pow as uninterpreted functions.  The facts the rules rely on are
 * added as ground instances at the terms that occur: exp t > 0; exp (a + b)
 * = exp a * exp b and exp (a - b) = exp a / exp b; log (exp t) = t;
 * t > 0 -> exp (log t) = t.  A quotient a / b is a * inv b with
 * b * inv b = 1 (so every divisor is nonzero, and division is ring
 * arithmetic, which Z3 decides fast).  Then Z3 is
 * asked, element by element, whether an output element of the lhs can
 * differ from the rhs's:
 * unsat proves the rule at that instance; sat is a counterexample (the rule
 * is wrong, or not implied by those facts); unknown (a timeout) leaves the
 * rule "not proven by Z3: tested only" (the float64 test in
 * tests/unit/test_rewrite.c still checks it).
 *
 * Then the planted unsound rules (planted.def) must each get a
 * counterexample.  Prints one line per rule, then "N passed, M failed".
 * usage: build/prove_rules [NAME-FILTER]
 */
#include <stdlib.h>
#include <string.h>
#include <z3.h>

#include "../../src/rewrite/egraph.h"

#define TIMEOUT_MS 20000

typedef struct Sym { Shape shape; ElemKind kind; Z3_ast *e; } Sym;

typedef struct Prover {
  Z3_context z;
  Arena *a;
  Z3_sort real, integer;
  Z3_func_decl f_exp, f_log, f_sqrt, f_rsqrt, f_tanh, f_erf, f_sigmoid, f_pow, f_inv;
  VEC(Z3_ast) hyps;
  VEC(unsigned) seen;   /* ids of exp/log terms whose facts are added */
} Prover;

/* ---- indices ---- */

static void unravel(const Shape *s, int64_t flat, int64_t *mi) {
  for (int i = s->rank - 1; i >= 0; i--) {
    int64_t n = s->d[i].n;
    mi[i] = n ? flat % n : 0;
    flat = n ? flat / n : 0;
  }
}

static int64_t ravel(const Shape *s, const int64_t *mi) {
  int64_t f = 0;
  for (int i = 0; i < s->rank; i++) f = f * s->d[i].n + mi[i];
  return f;
}

/* The flat index in `in` (broadcast, right-aligned) of output multi-index mi. */
static int64_t bidx(const Shape *out, const int64_t *mi, const Shape *in) {
  int64_t f = 0;
  int shift = out->rank - in->rank;
  for (int i = 0; i < in->rank; i++) f = f * in->d[i].n + (in->d[i].n == 1 ? 0 : mi[i + shift]);
  return f;
}

static Sym sym_new(Prover *p, const Shape *s, ElemKind k) {
  Sym r = {.shape = *s, .kind = k};
  int64_t n = shape_numel(s);
  r.e = arena_alloc(p->a, sizeof(Z3_ast) * (size_t)(n ? n : 1));
  return r;
}

/* ---- terms ---- */

static void hyp(Prover *p, Z3_ast h) { vec_push(p->a, &p->hyps, h); }

static bool seen(Prover *p, Z3_ast t) {
  unsigned id = Z3_get_ast_id(p->z, t);
  for (int i = 0; i < p->seen.len; i++)
    if (p->seen.data[i] == id) return true;
  vec_push(p->a, &p->seen, id);
  return false;
}

static Z3_ast app1(Prover *p, Z3_func_decl f, Z3_ast x) { return Z3_mk_app(p->z, f, 1, &x); }
static Z3_ast add2(Prover *p, Z3_ast a, Z3_ast b) { Z3_ast x[2] = {a, b}; return Z3_mk_add(p->z, 2, x); }
static Z3_ast sub2(Prover *p, Z3_ast a, Z3_ast b) { Z3_ast x[2] = {a, b}; return Z3_mk_sub(p->z, 2, x); }
static Z3_ast mul2(Prover *p, Z3_ast a, Z3_ast b) { Z3_ast x[2] = {a, b}; return Z3_mk_mul(p->z, 2, x); }
static Z3_ast num(Prover *p, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  if (strchr(buf, 'e') || strchr(buf, 'n') || strchr(buf, 'i')) snprintf(buf, sizeof buf, "%.0f", v);
  return Z3_mk_numeral(p->z, buf, p->real);
}
static Z3_ast zero(Prover *p) { return num(p, 0); }

/* Is t an application of decl kind k (or of the function f) with n arguments? */
static bool is_app(Prover *p, Z3_ast t, Z3_decl_kind k, Z3_func_decl f, unsigned n) {
  if (Z3_get_ast_kind(p->z, t) != Z3_APP_AST) return false;
  Z3_app a = Z3_to_app(p->z, t);
  if (Z3_get_app_num_args(p->z, a) != n) return false;
  Z3_func_decl d = Z3_get_app_decl(p->z, a);
  return f ? Z3_is_eq_func_decl(p->z, d, f) : Z3_get_decl_kind(p->z, d) == k;
}
static Z3_ast arg(Prover *p, Z3_ast t, unsigned i) { return Z3_get_app_arg(p->z, Z3_to_app(p->z, t), i); }

static Z3_ast mk_div(Prover *p, Z3_ast a, Z3_ast b);

static Z3_ast mk_exp(Prover *p, Z3_ast x) {
  Z3_ast e = app1(p, p->f_exp, x);
  if (seen(p, e)) return e;
  hyp(p, Z3_mk_gt(p->z, e, zero(p)));
  if (is_app(p, x, Z3_OP_ADD, NULL, 2))
    hyp(p, Z3_mk_eq(p->z, e, mul2(p, mk_exp(p, arg(p, x, 0)), mk_exp(p, arg(p, x, 1)))));
  if (is_app(p, x, Z3_OP_SUB, NULL, 2))
    hyp(p, Z3_mk_eq(p->z, e, mk_div(p, mk_exp(p, arg(p, x, 0)), mk_exp(p, arg(p, x, 1)))));
  if (is_app(p, x, 0, p->f_log, 1)) {
    Z3_ast u = arg(p, x, 0);
    hyp(p, Z3_mk_implies(p->z, Z3_mk_gt(p->z, u, zero(p)), Z3_mk_eq(p->z, e, u)));
  }
  return e;
}

static Z3_ast mk_log(Prover *p, Z3_ast x) {
  Z3_ast l = app1(p, p->f_log, x);
  if (!seen(p, l) && is_app(p, x, 0, p->f_exp, 1)) hyp(p, Z3_mk_eq(p->z, l, arg(p, x, 0)));
  return l;
}

static Z3_ast to_real(Prover *p, Z3_ast x, ElemKind k) {
  if (k == EK_INT) return Z3_mk_int2real(p->z, x);
  if (k == EK_BOOL) return Z3_mk_ite(p->z, x, num(p, 1), zero(p));
  return x;
}

/* a / b as a * inv(b), with b * inv(b) = 1: division becomes ring
   arithmetic, which Z3 normalizes (its nonlinear division times out). */
static Z3_ast mk_div(Prover *p, Z3_ast a, Z3_ast b) {
  Z3_ast ib = app1(p, p->f_inv, b);
  if (!seen(p, ib)) hyp(p, Z3_mk_eq(p->z, mul2(p, b, ib), num(p, 1)));
  return mul2(p, a, ib);
}

static Z3_ast max2(Prover *p, Z3_ast a, Z3_ast b) { return Z3_mk_ite(p->z, Z3_mk_ge(p->z, a, b), a, b); }
static Z3_ast min2(Prover *p, Z3_ast a, Z3_ast b) { return Z3_mk_ite(p->z, Z3_mk_le(p->z, a, b), a, b); }

static Z3_ast unary(Prover *p, Op op, Z3_ast x, ElemKind k, ElemKind kout) {
  if (kout == EK_REAL) x = to_real(p, x, k);
  switch (op) {
  case OP_NEG: return Z3_mk_unary_minus(p->z, x);
  case OP_EXP: return mk_exp(p, x);
  case OP_LOG: return mk_log(p, x);
  case OP_SQRT: return app1(p, p->f_sqrt, x);
  case OP_RSQRT: return app1(p, p->f_rsqrt, x);
  case OP_TANH: return app1(p, p->f_tanh, x);
  case OP_ERF: return app1(p, p->f_erf, x);
  case OP_SIGMOID: return app1(p, p->f_sigmoid, x);
  case OP_RELU: return Z3_mk_ite(p->z, Z3_mk_gt(p->z, x, zero(p)), x, zero(p));
  case OP_ABS: {
    Z3_ast z0 = k == EK_INT ? Z3_mk_int(p->z, 0, p->integer) : zero(p);
    return Z3_mk_ite(p->z, Z3_mk_ge(p->z, x, z0), x, Z3_mk_unary_minus(p->z, x));
  }
  case OP_CAST: return x;
  default: return NULL;
  }
}

static Z3_ast binary(Prover *p, Op op, Z3_ast a, ElemKind ka, Z3_ast b, ElemKind kb, ElemKind kout) {
  bool ints = ka == EK_INT && kb == EK_INT && kout != EK_BOOL && op != OP_DIV && op != OP_POW;
  bool cmp_ints = ka == kb && op_info[op].cls == OPC_COMPARE;
  if (!ints && !cmp_ints) {
    a = to_real(p, a, ka);
    b = to_real(p, b, kb);
  }
  switch (op) {
  case OP_ADD: return add2(p, a, b);
  case OP_SUB: return sub2(p, a, b);
  case OP_MUL: return mul2(p, a, b);
  case OP_DIV: return mk_div(p, a, b);
  case OP_POW: {
    Z3_ast x[2] = {a, b};
    return Z3_mk_app(p->z, p->f_pow, 2, x);
  }
  case OP_MAX: return max2(p, a, b);
  case OP_MIN: return min2(p, a, b);
  case OP_LT: return Z3_mk_lt(p->z, a, b);
  case OP_LE: return Z3_mk_le(p->z, a, b);
  case OP_GT: return Z3_mk_gt(p->z, a, b);
  case OP_GE: return Z3_mk_ge(p->z, a, b);
  case OP_EQ: return Z3_mk_eq(p->z, a, b);
  case OP_NE: return Z3_mk_not(p->z, Z3_mk_eq(p->z, a, b));
  default: return NULL;
  }
}

/* ---- evaluating a pattern ---- */

static bool eval(Prover *p, const Rule *r, const Pat *pt, const RuleInstance *in, const Sym *leaves, Sym *out);

static bool eval_op(Prover *p, Op op, const NodeAttrs *at, Sym *k, int nk, Sym *out) {
  const Shape *ks[16];
  ElemKind kk[16];
  for (int i = 0; i < nk; i++) {
    ks[i] = &k[i].shape;
    kk[i] = k[i].kind;
  }
  Shape s;
  ElemKind ko;
  if (!op_result(op, at, ks, kk, nk, &s, &ko, NULL, 0)) return false;
  *out = sym_new(p, &s, ko);
  int64_t n = shape_numel(&s), mi[TS_MAX_RANK], mj[TS_MAX_RANK];
  switch (op_info[op].cls) {
  case OPC_LEAF: return false;
  case OPC_UNARY:
    for (int64_t i = 0; i < n; i++) out->e[i] = unary(p, op, k[0].e[i], k[0].kind, ko);
    return true;
  case OPC_BINARY:
  case OPC_COMPARE:
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      out->e[i] = binary(p, op, k[0].e[bidx(&s, mi, &k[0].shape)], k[0].kind, k[1].e[bidx(&s, mi, &k[1].shape)],
                         k[1].kind, ko);
    }
    return true;
  case OPC_SELECT:
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      Z3_ast a = k[1].e[bidx(&s, mi, &k[1].shape)], b = k[2].e[bidx(&s, mi, &k[2].shape)];
      if (ko == EK_REAL) a = to_real(p, a, k[1].kind), b = to_real(p, b, k[2].kind);
      out->e[i] = Z3_mk_ite(p->z, k[0].e[bidx(&s, mi, &k[0].shape)], a, b);
    }
    return true;
  case OPC_REDUCE: {
    int ax = axis_norm(at->axis, k[0].shape.rank);
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      memcpy(mj, mi, sizeof mi);
      Z3_ast acc = NULL;
      for (int64_t j = 0; j < k[0].shape.d[ax].n; j++) {
        mj[ax] = j;
        Z3_ast v = k[0].e[ravel(&k[0].shape, mj)];
        acc = !acc ? v : op == OP_SUM ? add2(p, acc, v) : op == OP_AMAX ? max2(p, acc, v) : min2(p, acc, v);
      }
      out->e[i] = acc ? acc : ko == EK_INT ? Z3_mk_int(p->z, 0, p->integer) : zero(p);
    }
    return true;
  }
  case OPC_MATMUL: {
    const Shape *sa = &k[0].shape, *sb = &k[1].shape;
    int64_t K = sa->d[sa->rank - 1].n;
    Shape ba = *sa, bb = *sb, bo = s;
    ba.rank -= 2;
    bb.rank -= 2;
    bo.rank -= 2;
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      int64_t m = mi[s.rank - 2], c = mi[s.rank - 1];
      int64_t fa = bidx(&bo, mi, &ba), fb = bidx(&bo, mi, &bb);
      Z3_ast acc = NULL;
      for (int64_t j = 0; j < K; j++) {
        Z3_ast x = to_real(p, k[0].e[(fa * sa->d[sa->rank - 2].n + m) * K + j], k[0].kind);
        Z3_ast y = to_real(p, k[1].e[(fb * K + j) * sb->d[sb->rank - 1].n + c], k[1].kind);
        Z3_ast t = mul2(p, x, y);
        acc = acc ? add2(p, acc, t) : t;
      }
      out->e[i] = acc ? acc : zero(p);
    }
    return true;
  }
  case OPC_LAYOUT:
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      if (op == OP_PERMUTE) {
        for (int d = 0; d < s.rank; d++) mj[at->perm[d]] = mi[d];
        out->e[i] = k[0].e[ravel(&k[0].shape, mj)];
      } else if (op == OP_RESHAPE) {
        out->e[i] = k[0].e[i];
      } else {
        int ax = axis_norm(at->axis, s.rank);
        memcpy(mj, mi, sizeof mi);
        mj[ax] += at->lo;
        out->e[i] = k[0].e[ravel(&k[0].shape, mj)];
      }
    }
    return true;
  case OPC_CONCAT: {
    int ax = axis_norm(at->axis, s.rank);
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      memcpy(mj, mi, sizeof mi);
      int t = 0;
      while (mj[ax] >= k[t].shape.d[ax].n) mj[ax] -= k[t++].shape.d[ax].n;
      out->e[i] = k[t].e[ravel(&k[t].shape, mj)];
    }
    return true;
  }
  case OPC_GATHER: {
    int ax = axis_norm(at->axis, s.rank);
    const Shape *xs = &k[0].shape;
    for (int64_t i = 0; i < n; i++) {
      unravel(&s, i, mi);
      Z3_ast idx = k[1].e[bidx(&s, mi, &k[1].shape)];
      memcpy(mj, mi, sizeof mi);
      for (int d = 0; d < xs->rank; d++)
        if (xs->d[d].n == 1) mj[d] = 0;
      int64_t len = xs->d[ax].n;
      mj[ax] = len - 1;
      Z3_ast v = k[0].e[ravel(xs, mj)];
      for (int64_t j = len - 2; j >= 0; j--) {
        mj[ax] = j;
        v = Z3_mk_ite(p->z, Z3_mk_eq(p->z, idx, Z3_mk_int(p->z, (int)j, p->integer)), k[0].e[ravel(xs, mj)], v);
      }
      out->e[i] = v;
    }
    return true;
  }
  }
  return false;
}

static bool eval(Prover *p, const Rule *r, const Pat *pt, const RuleInstance *in, const Sym *leaves, Sym *out) {
  switch (pt->kind) {
  case PAT_VAR: *out = leaves[pt->var]; return true;
  case PAT_NUM:
    *out = sym_new(p, &(Shape){.rank = 0}, EK_REAL);
    out->e[0] = num(p, pt->num);
    return true;
  case PAT_OP: break;
  }
  Sym k[16];
  const Shape *ks[16];
  for (int i = 0; i < pt->nkids; i++) {
    if (!eval(p, r, pt->kids[i], in, leaves, &k[i])) return false;
    ks[i] = &k[i].shape;
  }
  const NodeAttrs *ap[PAT_MAXA];
  for (int i = 0; i < PAT_MAXA; i++) ap[i] = &in->a[i];
  NodeAttrs at;
  if (!pat_attrs(pt, ap, ks, &at)) return false;
  if (pt->pseudo == PSEUDO_IOTA_ALONG) {
    int ax = axis_norm(at.axis, ks[0]->rank);
    if (ax < 0) return false;
    Shape s = {.rank = ks[0]->rank};
    for (int d = 0; d < s.rank; d++) s.d[d] = (Dim){d == ax ? ks[0]->d[ax].n : 1, NULL};
    *out = sym_new(p, &s, EK_INT);
    for (int64_t i = 0; i < s.d[ax].n; i++) out->e[i] = Z3_mk_int(p->z, (int)i, p->integer);
    return true;
  }
  Op op = pt->opvar >= 0 ? in->o[pt->opvar] : pt->op;
  return eval_op(p, op, &at, k, pt->nkids, out);
}

/* ---- one instance ---- */

typedef enum { PROVEN, REFUTED, UNKNOWN, ERROR } Verdict;

static Verdict check_instance(const Rule *r, const RuleInstance *in, char *model, size_t mlen) {
  Z3_config cfg = Z3_mk_config();
  Prover p = {.z = Z3_mk_context(cfg), .a = arena_new()};
  Z3_del_config(cfg);
  p.real = Z3_mk_real_sort(p.z);
  p.integer = Z3_mk_int_sort(p.z);
  Z3_sort two[2] = {p.real, p.real};
#define FN(f, name) p.f = Z3_mk_func_decl(p.z, Z3_mk_string_symbol(p.z, name), 1, &p.real, p.real)
  FN(f_exp, "exp");
  FN(f_log, "log");
  FN(f_sqrt, "sqrt");
  FN(f_rsqrt, "rsqrt");
  FN(f_tanh, "tanh");
  FN(f_erf, "erf");
  FN(f_sigmoid, "sigmoid");
  FN(f_inv, "inv");
#undef FN
  p.f_pow = Z3_mk_func_decl(p.z, Z3_mk_string_symbol(p.z, "pow"), 2, two, p.real);
  Sym leaves[PAT_MAXV];
  for (int v = 0; v < r->nvars; v++) {
    leaves[v] = sym_new(&p, &in->leaf[v].shape, in->leaf[v].kind);
    int64_t n = shape_numel(&in->leaf[v].shape);
    for (int64_t i = 0; i < n; i++) {
      char name[64];
      snprintf(name, sizeof name, "%s_%lld", r->var_name[v], (long long)i);
      bool is_int = in->leaf[v].kind == EK_INT;
      Z3_ast x = Z3_mk_const(p.z, Z3_mk_string_symbol(p.z, name), is_int ? p.integer : p.real);
      leaves[v].e[i] = x;
      if (is_int) {
        hyp(&p, Z3_mk_ge(p.z, x, Z3_mk_int(p.z, 0, p.integer)));
        hyp(&p, Z3_mk_lt(p.z, x, Z3_mk_int(p.z, (int)(in->bound[v] > 0 ? in->bound[v] : 1), p.integer)));
      }
      if (in->leaf[v].sign == SIGN_POS) hyp(&p, Z3_mk_gt(p.z, x, zero(&p)));
    }
  }
  Sym l, rr;
  Verdict verdict = ERROR;
  if (eval(&p, r, r->lhs, in, leaves, &l) && eval(&p, r, r->rhs, in, leaves, &rr) &&
      shape_equal(&l.shape, &rr.shape)) {
    int64_t n = shape_numel(&l.shape);
    Z3_ast *diff = arena_alloc(p.a, sizeof(Z3_ast) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
      Z3_ast a = l.e[i], b = rr.e[i];
      if (l.kind != rr.kind) a = to_real(&p, a, l.kind), b = to_real(&p, b, rr.kind);
      diff[i] = Z3_mk_not(p.z, Z3_mk_eq(p.z, a, b));
    }
    Z3_solver s = Z3_mk_solver(p.z);
    Z3_solver_inc_ref(p.z, s);
    Z3_params prm = Z3_mk_params(p.z);
    Z3_params_inc_ref(p.z, prm);
    Z3_params_set_uint(p.z, prm, Z3_mk_string_symbol(p.z, "timeout"), TIMEOUT_MS);
    Z3_solver_set_params(p.z, s, prm);
    for (int i = 0; i < p.hyps.len; i++) Z3_solver_assert(p.z, s, p.hyps.data[i]);
    /* one query per output element: small problems, which nlsat decides
       where their disjunction would time out */
    verdict = PROVEN;
    for (int64_t i = 0; i < n && verdict == PROVEN; i++) {
      Z3_solver_push(p.z, s);
      Z3_solver_assert(p.z, s, diff[i]);
      Z3_lbool res = Z3_solver_check(p.z, s);
      verdict = res == Z3_L_FALSE ? PROVEN : res == Z3_L_TRUE ? REFUTED : UNKNOWN;
      if (verdict != REFUTED) Z3_solver_pop(p.z, s, 1);
    }
    if (verdict == REFUTED && model) {
      Z3_model m = Z3_solver_get_model(p.z, s);
      Z3_model_inc_ref(p.z, m);
      snprintf(model, mlen, "%s", Z3_model_to_string(p.z, m));
      for (char *c = model; *c; c++)
        if (*c == '\n') *c = ' ';
      if (strlen(model) > 200) strcpy(model + 196, " ..."); /* a witness, not the whole model */
      Z3_model_dec_ref(p.z, m);
    }
    Z3_params_dec_ref(p.z, prm);
    Z3_solver_dec_ref(p.z, s);
  }
  arena_free(p.a);
  Z3_del_context(p.z);
  return verdict;
}

/* ---- the table and the planted rules ---- */

static const RwRule planted[] = {
#define X(name, lhs, rhs, cond, doc) {#name, "planted", lhs, rhs, cond, false, doc},
#include "planted.def"
#undef X
};

#define MAX_INST 64

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : NULL;
  const Rule *rules = rw_rules();
  RuleInstance *inst = malloc(sizeof(RuleInstance) * MAX_INST);
  int pass = 0, fail = 0, tested_only = 0;
  char desc[512], model[2048];
  for (int i = 0; i < rw_nrules(); i++) {
    const Rule *r = &rules[i];
    if (filter && !strstr(r->info.name, filter)) continue;
    int n = rule_instances(r, true, 2, inst, 3 * (r->nops ? 8 : 1));
    if (n == 0) {
      printf("FAIL     %-22s no instance to prove it at\n", r->info.name);
      fail++;
      continue;
    }
    int proven = 0, unknown = 0, refuted = 0, errors = 0;
    char sizes[4096] = "";
    size_t used = 0;
    for (int k = 0; k < n; k++) {
      Verdict v = check_instance(r, &inst[k], model, sizeof model);
      rule_instance_str(r, &inst[k], desc, sizeof desc);
      if (v == PROVEN) {
        proven++;
        if (used < sizeof sizes) used += (size_t)snprintf(sizes + used, sizeof sizes - used, "%s%s", k ? "; " : "", desc);
      } else if (v == UNKNOWN) {
        unknown++;
      } else if (v == REFUTED) {
        refuted++;
        printf("FAIL     %-22s counterexample at %s: %s\n", r->info.name, desc, model);
      } else {
        errors++;
        printf("FAIL     %-22s could not evaluate the instance %s\n", r->info.name, desc);
      }
    }
    if (refuted || errors) {
      fail++;
    } else if (unknown) {
      tested_only++;
      pass++;
      printf("TESTED   %-22s not proven by Z3: tested only (%d of %d instances undecided)\n", r->info.name, unknown, n);
    } else {
      pass++;
      printf("proven   %-22s at %s\n", r->info.name, sizes);
    }
  }
  Arena *a = arena_new();
  for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
    Rule r;
    char err[512];
    if (filter && !strstr(planted[i].name, filter)) continue;
    if (!rule_parse(a, &planted[i], &r, err, sizeof err)) {
      printf("FAIL     %-22s does not parse: %s\n", planted[i].name, err);
      fail++;
      continue;
    }
    int n = rule_instances(&r, true, MAX_INST, inst, MAX_INST), k = 0;
    Verdict v = PROVEN;
    for (; k < n && v != REFUTED; k++) v = check_instance(&r, &inst[k], model, sizeof model);
    if (v == REFUTED) {
      rule_instance_str(&r, &inst[k - 1], desc, sizeof desc);
      printf("caught   %-22s counterexample at %s: %s\n", planted[i].name, desc, model);
      pass++;
    } else {
      printf("FAIL     %-22s (planted, unsound) got no counterexample in %d instances\n", planted[i].name, n);
      fail++;
    }
  }
  arena_free(a);
  free(inst);
  if (tested_only) printf("%d rule%s not proven by Z3 (tested only)\n", tested_only, tested_only == 1 ? "" : "s");
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
