/*
 * pattern.c: the rule language: parsing, e-matching, and building a
 * pattern's instance (its shape, or its e-nodes).
 *
 * Syntax (s-expressions):
 *
 *   pat   := ?name                  a class variable
 *          | NUMBER                 a real scalar constant (in a lhs: any class whose
 *                                   constant value is exactly that)
 *          | ( head pat... )
 *   head  := OP [@ attr]            an op of ops.def by name: mul, sum, permute, ...
 *          | %name [@ attr]         an op variable: %u... ranges over the elementwise unary
 *                                   ops, %b... over the binary arithmetic ops, %c... over the
 *                                   comparisons (the first letter says which)
 *          | T                      the transpose: a permute swapping the last two axes
 *          | iota_along @ attr      rhs only, one child ?x: the index along axis attr of
 *                                   ?x's shape (iota reshaped to size 1 on the other axes)
 *          | column                 rhs only, one child ?g of size 1 on every axis but its
 *                                   last (n): ?g reshaped to [n, 1], a column that scales
 *                                   the rows of a matrix
 *   attr  := ?name                  an attribute variable: bound to the node's attribute
 *                                   (axis, permutation, target shape) in the lhs, copied in the rhs;
 *                                   a lhs node with an attribute but no @ matches any
 *          | INTEGER                a literal axis (negative: from the end)
 *          | (compose ?q ?p)        rhs only: the permutation of permute@?p after permute@?q
 *
 *   condition := name(arg, ...) [& name(arg, ...)]...    arg := ?name | INTEGER
 *
 * E.g. `(sum@?ax (mul ?x ?r))` => `(mul (sum@?ax ?x) ?r)` if `const_along(?r, ?x, ?ax)`.
 * Attribute variables keep the frame they were bound in: an axis is the
 * normalized axis of the lhs node that bound it, and a rhs node reusing it
 * reads the same number (conditions check that the frames agree).
 *
 * Matching is top-down and backtracking over a list of goals (pattern,
 * class): a class goal tries each e-node of the class in id order, so the
 * matches come out in a deterministic order.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egraph.h"

/* ---- parsing ---- */

typedef struct Parser {
  Arena *a;
  const char *s, *p;
  Rule *r;
  bool rhs;
  char *err;
  size_t errlen;
  bool failed;
} Parser;

static void perr(Parser *ps, const char *fmt, ...) TS_PRINTF(2, 3);
static void perr(Parser *ps, const char *fmt, ...) {
  if (ps->failed) return;
  ps->failed = true;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(ps->err, ps->errlen, "%s (at column %d of '%s')", msg, (int)(ps->p - ps->s) + 1, ps->s);
}

static void skip_ws(Parser *ps) {
  while (isspace((unsigned char)*ps->p)) ps->p++;
}

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* A name after ps->p (letters, digits, '_'); length in *n. */
static const char *name_at(Parser *ps, int *n) {
  const char *b = ps->p;
  while (is_name_char(*ps->p)) ps->p++;
  *n = (int)(ps->p - b);
  return b;
}

/* The slot of a variable named (b, n) in names[*count], added if add. */
static int slot_of(Parser *ps, const char **names, int *count, int max, const char *b, int n, bool add,
                   const char *what) {
  for (int i = 0; i < *count; i++)
    if ((int)strlen(names[i]) == n && !strncmp(names[i], b, (size_t)n)) return i;
  if (!add) {
    perr(ps, "the %s ?%.*s is not bound by the left-hand side", what, n, b);
    return -1;
  }
  if (*count == max) {
    perr(ps, "more than %d %ss", max, what);
    return -1;
  }
  names[*count] = arena_strndup(ps->a, b, (size_t)n);
  return (*count)++;
}

static bool name_in(const char **names, int count, const char *b, int n) {
  for (int i = 0; i < count; i++)
    if ((int)strlen(names[i]) == n && !strncmp(names[i], b, (size_t)n)) return true;
  return false;
}

/* The kind of attribute an op carries ('S' a target shape, else its OpAttrs). */
static int attr_type(Op op) { return op == OP_RESHAPE ? 'S' : (int)op_info[op].attrs; }

static bool takes_attr(Op op) { return op == OP_RESHAPE || op_info[op].attrs != ATTR_NONE; }

static void parse_attr(Parser *ps, Pat *p, Op op) {
  Rule *r = ps->r;
  skip_ws(ps);
  if (*ps->p == '?') {
    ps->p++;
    int n;
    const char *b = name_at(ps, &n);
    if (!n) return perr(ps, "an attribute variable needs a name");
    if (name_in(r->var_name, r->nvars, b, n)) return perr(ps, "?%.*s is a class variable, not an attribute", n, b);
    bool known = name_in(r->attr_name, r->nattrs, b, n);
    p->ak = PA_VAR;
    p->aslot = slot_of(ps, r->attr_name, &r->nattrs, PAT_MAXA, b, n, !ps->rhs, "attribute variable");
    if (p->aslot < 0) return;
    if (!known) r->attr_op[p->aslot] = op;
    else if (attr_type(r->attr_op[p->aslot]) != attr_type(op))
      return perr(ps, "?%.*s is the attribute of '%s', not of '%s'", n, b, op_info[r->attr_op[p->aslot]].name,
                  op_info[op].name);
    return;
  }
  if (*ps->p == '(') {
    ps->p++;
    skip_ws(ps);
    int n;
    const char *b = name_at(ps, &n);
    if (n != 7 || strncmp(b, "compose", 7)) return perr(ps, "expected (compose ?q ?p)");
    if (!ps->rhs || op != OP_PERMUTE) return perr(ps, "compose is a permute attribute of a right-hand side");
    int slots[2];
    for (int i = 0; i < 2; i++) {
      skip_ws(ps);
      if (*ps->p != '?') return perr(ps, "compose takes two permutation variables");
      ps->p++;
      b = name_at(ps, &n);
      slots[i] = slot_of(ps, r->attr_name, &r->nattrs, PAT_MAXA, b, n, false, "attribute variable");
      if (slots[i] < 0) return;
      if (r->attr_op[slots[i]] != OP_PERMUTE) return perr(ps, "compose takes permutation variables");
    }
    skip_ws(ps);
    if (*ps->p != ')') return perr(ps, "expected ')' after compose's arguments");
    ps->p++;
    p->ak = PA_COMPOSE;
    p->aslot = slots[0];
    p->aslot2 = slots[1];
    return;
  }
  char *end;
  long v = strtol(ps->p, &end, 10);
  if (end == ps->p) return perr(ps, "expected an attribute after '@'");
  if (attr_type(op) != ATTR_AXIS) return perr(ps, "a literal attribute is an axis; '%s' has none", op_info[op].name);
  ps->p = end;
  p->ak = PA_LIT;
  p->alit = (int)v;
}

static Pat *parse_pat(Parser *ps);

static Pat *parse_node(Parser *ps) {
  Rule *r = ps->r;
  Pat *p = arena_alloc(ps->a, sizeof *p);
  p->kind = PAT_OP;
  p->opvar = -1;
  skip_ws(ps);
  int n;
  if (*ps->p == '%') {
    ps->p++;
    const char *b = name_at(ps, &n);
    if (!n) return perr(ps, "an op variable needs a name"), p;
    OpClass cls = b[0] == 'u' ? OPC_UNARY : b[0] == 'b' ? OPC_BINARY : b[0] == 'c' ? OPC_COMPARE : OPC_LEAF;
    if (cls == OPC_LEAF) return perr(ps, "an op variable is %%u..., %%b... or %%c..."), p;
    bool known = name_in(r->op_name, r->nops, b, n);
    p->opvar = slot_of(ps, r->op_name, &r->nops, PAT_MAXO, b, n, !ps->rhs, "op variable");
    if (p->opvar < 0) return p;
    if (!known) r->op_class[p->opvar] = cls;
  } else {
    const char *b = name_at(ps, &n);
    if (n == 1 && b[0] == 'T') {
      p->pseudo = PSEUDO_T;
      p->op = OP_PERMUTE;
    } else if (n == 10 && !strncmp(b, "iota_along", 10)) {
      if (!ps->rhs) return perr(ps, "iota_along is for right-hand sides"), p;
      p->pseudo = PSEUDO_IOTA_ALONG;
      p->op = OP_SUM; /* its attribute is an axis, like sum's */
    } else if (n == 6 && !strncmp(b, "column", 6)) {
      if (!ps->rhs) return perr(ps, "column is for right-hand sides"), p;
      p->pseudo = PSEUDO_COLUMN;
      p->op = OP_RESHAPE; /* its target shape comes from the child */
    } else {
      int op = 0;
      while (op < OP_COUNT && ((int)strlen(op_info[op].name) != n || strncmp(op_info[op].name, b, (size_t)n))) op++;
      if (op == OP_COUNT) return perr(ps, "unknown op '%.*s'", n, b), p;
      if (op_info[op].cls == OPC_LEAF) return perr(ps, "'%s' cannot be a pattern node", op_info[op].name), p;
      p->op = (Op)op;
    }
  }
  if (*ps->p == '@') {
    ps->p++;
    if (p->opvar >= 0 || p->pseudo == PSEUDO_T || p->pseudo == PSEUDO_COLUMN || !takes_attr(p->op))
      return perr(ps, "this op has no attribute"), p;
    parse_attr(ps, p, p->op);
  } else if (ps->rhs && p->opvar < 0 && p->pseudo != PSEUDO_T && p->pseudo != PSEUDO_COLUMN && takes_attr(p->op)) {
    return perr(ps, "'%s' in a right-hand side needs its attribute (@...)", op_info[p->op].name), p;
  } else if (!ps->rhs && p->opvar < 0 && p->pseudo == PSEUDO_NONE && takes_attr(p->op)) {
    /* an attribute the lhs leaves open gets an anonymous variable: it
       matches anything, and the rule checks enumerate it */
    if (r->nattrs == PAT_MAXA) return perr(ps, "more than %d attributes", PAT_MAXA), p;
    p->ak = PA_VAR;
    p->aslot = r->nattrs;
    r->attr_name[r->nattrs] = arena_printf(ps->a, "_%d", r->nattrs);
    r->attr_op[r->nattrs++] = p->op;
  }
  Pat *kids[16];
  for (;;) {
    skip_ws(ps);
    if (*ps->p == ')' || !*ps->p || ps->failed) break;
    if (p->nkids == 16) return perr(ps, "too many operands"), p;
    kids[p->nkids++] = parse_pat(ps);
  }
  if (*ps->p != ')') return perr(ps, "expected ')'"), p;
  ps->p++;
  int arity = p->opvar >= 0 || p->pseudo ? 1 : op_info[p->op].arity;
  if (p->opvar >= 0) arity = r->op_class[p->opvar] == OPC_UNARY ? 1 : 2;
  if (arity >= 0 && p->nkids != arity) return perr(ps, "this node takes %d operand(s), not %d", arity, p->nkids), p;
  p->kids = arena_alloc(ps->a, sizeof(Pat *) * (size_t)(p->nkids ? p->nkids : 1));
  memcpy(p->kids, kids, sizeof(Pat *) * (size_t)p->nkids);
  return p;
}

static Pat *parse_pat(Parser *ps) {
  Rule *r = ps->r;
  skip_ws(ps);
  if (*ps->p == '(') {
    ps->p++;
    return parse_node(ps);
  }
  Pat *p = arena_alloc(ps->a, sizeof *p);
  if (*ps->p == '?') {
    ps->p++;
    int n;
    const char *b = name_at(ps, &n);
    if (!n) return perr(ps, "a variable needs a name"), p;
    if (name_in(r->attr_name, r->nattrs, b, n)) return perr(ps, "?%.*s is an attribute, not a class", n, b), p;
    p->kind = PAT_VAR;
    p->var = slot_of(ps, r->var_name, &r->nvars, PAT_MAXV, b, n, !ps->rhs, "class variable");
    return p;
  }
  char *end;
  double v = strtod(ps->p, &end);
  if (end == ps->p) return perr(ps, "expected a pattern"), p;
  ps->p = end;
  p->kind = PAT_NUM;
  p->num = v;
  return p;
}

static Pat *parse_side(Parser *ps, const char *text, bool rhs) {
  ps->s = ps->p = text;
  ps->rhs = rhs;
  Pat *p = parse_pat(ps);
  skip_ws(ps);
  if (*ps->p && !ps->failed) perr(ps, "text after the pattern");
  return p;
}

static void parse_conds(Parser *ps, const char *text) {
  Rule *r = ps->r;
  ps->s = ps->p = text;
  for (;;) {
    skip_ws(ps);
    int n;
    const char *b = name_at(ps, &n);
    char name[64];
    snprintf(name, sizeof name, "%.*s", n, b);
    const CondDef *d = cond_lookup(name);
    if (!d) return perr(ps, "unknown condition '%s'", name);
    if (r->nconds == 4) return perr(ps, "more than 4 conditions");
    Cond *c = &r->conds[r->nconds++];
    c->def = d;
    skip_ws(ps);
    if (*ps->p != '(') return perr(ps, "expected '(' after %s", name);
    ps->p++;
    for (int i = 0; i < d->nargs; i++) {
      skip_ws(ps);
      if (i) {
        if (*ps->p != ',') return perr(ps, "%s takes %d arguments", name, d->nargs);
        ps->p++;
        skip_ws(ps);
      }
      if (*ps->p == '?') {
        ps->p++;
        const char *vb = name_at(ps, &n);
        if (name_in(r->attr_name, r->nattrs, vb, n)) {
          c->args[i] = (CondArg){CA_ATTR, slot_of(ps, r->attr_name, &r->nattrs, PAT_MAXA, vb, n, false, "x"), 0};
        } else {
          int s = slot_of(ps, r->var_name, &r->nvars, PAT_MAXV, vb, n, false, "class variable");
          c->args[i] = (CondArg){CA_CLASS, s, 0};
        }
      } else {
        char *end;
        long v = strtol(ps->p, &end, 10);
        if (end == ps->p) return perr(ps, "expected ?var or an integer");
        ps->p = end;
        c->args[i] = (CondArg){CA_INT, 0, (int)v};
      }
    }
    skip_ws(ps);
    if (*ps->p != ')') return perr(ps, "%s takes %d arguments", name, d->nargs);
    ps->p++;
    skip_ws(ps);
    if (!*ps->p) return;
    if (*ps->p != '&') return perr(ps, "conditions are joined by '&'");
    ps->p++;
  }
}

bool rule_parse(Arena *a, const RwRule *info, Rule *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->info = *info;
  Parser ps = {.a = a, .r = out, .err = err, .errlen = errlen};
  out->lhs = parse_side(&ps, info->lhs, false);
  if (!ps.failed && out->lhs->kind != PAT_OP) perr(&ps, "a left-hand side must be an op");
  if (!ps.failed) out->rhs = parse_side(&ps, info->rhs, true);
  if (!ps.failed && info->cond && *info->cond) parse_conds(&ps, info->cond);
  if (ps.failed) return false;
  return true;
}

/* ---- matching ---- */

typedef struct Goal { const Pat *p; int cls; } Goal;
#define MAX_GOALS 48

typedef struct Matcher {
  EGraph *eg;
  const Rule *r;
  Arena *scratch;
  SubstVec *out;
  Subst s;
} Matcher;

/* Is perm (n entries) the swap of the last two axes? */
static bool is_swap_last2(const int *perm, int n) {
  if (n < 2) return false;
  for (int i = 0; i < n - 2; i++)
    if (perm[i] != i) return false;
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

static void solve(Matcher *m, const Goal *goals, int ngoals);

/* Try e-node id for goal g (an op pattern); goals after it are rest. */
static void try_node(Matcher *m, const Pat *p, int id, const Goal *rest, int nrest) {
  EGraph *eg = m->eg;
  const ENode *e = &eg->nodes[id];
  const Rule *r = m->r;
  bool bound_op = false, bound_attr = false;
  if (p->opvar >= 0) {
    if (m->s.op[p->opvar] == OP_COUNT) {
      if (op_info[e->op].cls != r->op_class[p->opvar]) return;
      m->s.op[p->opvar] = e->op;
      bound_op = true;
    } else if (m->s.op[p->opvar] != e->op) {
      return;
    }
  } else if (e->op != p->op) {
    return;
  }
  if (p->pseudo == PSEUDO_T && !is_swap_last2(e->at.perm, e->at.nperm)) goto undo;
  if (p->ak == PA_LIT) {
    int rank = eg->classes[eg_find(eg, e->kids[0])].f.shape.rank;
    if (axis_norm(p->alit, rank) != e->at.axis) goto undo;
  } else if (p->ak == PA_VAR) {
    int a = m->s.anode[p->aslot];
    if (a < 0) {
      m->s.anode[p->aslot] = id;
      bound_attr = true;
    } else if (!attrs_equal(e->op, &eg->nodes[a].at, &e->at)) {
      goto undo;
    }
  }
  if (nrest + e->nin > MAX_GOALS) goto undo;
  {
    Goal next[MAX_GOALS];
    memcpy(next, rest, sizeof(Goal) * (size_t)nrest);
    /* children are pushed last-first so that child 0 is solved first */
    for (int i = e->nin - 1; i >= 0; i--) next[nrest++] = (Goal){p->kids[i], eg_find(eg, e->kids[i])};
    solve(m, next, nrest);
  }
undo:
  if (bound_op) m->s.op[p->opvar] = OP_COUNT;
  if (bound_attr) m->s.anode[p->aslot] = -1;
}

static void solve(Matcher *m, const Goal *goals, int ngoals) {
  EGraph *eg = m->eg;
  if (ngoals == 0) {
    vec_push(m->scratch, m->out, m->s);
    return;
  }
  Goal g = goals[ngoals - 1];
  const Pat *p = g.p;
  switch (p->kind) {
  case PAT_VAR:
    if (m->s.cls[p->var] < 0) {
      m->s.cls[p->var] = g.cls;
      solve(m, goals, ngoals - 1);
      m->s.cls[p->var] = -1;
    } else if (m->s.cls[p->var] == g.cls) {
      solve(m, goals, ngoals - 1);
    }
    return;
  case PAT_NUM: {
    const EgFacts *f = &eg->classes[g.cls].f;
    if (f->is_const && f->value == p->num) solve(m, goals, ngoals - 1);
    return;
  }
  case PAT_OP: {
    const EClass *c = &eg->classes[g.cls];
    for (int i = 0; i < c->nnodes; i++) {
      if (p == m->r->lhs) m->s.rnode = c->nodes[i];
      try_node(m, p, c->nodes[i], goals, ngoals - 1);
    }
    return;
  }
  }
}

void pat_match(EGraph *eg, const Rule *r, int cls, Arena *scratch, SubstVec *out) {
  Matcher m = {.eg = eg, .r = r, .scratch = scratch, .out = out};
  memset(m.s.cls, -1, sizeof m.s.cls);
  memset(m.s.anode, -1, sizeof m.s.anode);
  for (int i = 0; i < PAT_MAXO; i++) m.s.op[i] = OP_COUNT;
  m.s.root = cls;
  Goal g = {r->lhs, cls};
  solve(&m, &g, 1);
}

void subst_view(EGraph *eg, const Rule *r, const Subst *s, MatchView *m) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < r->nvars; i++) m->v[i] = s->cls[i] >= 0 ? &eg->classes[eg_find(eg, s->cls[i])].f : NULL;
  for (int i = 0; i < r->nattrs; i++) m->a[i] = s->anode[i] >= 0 ? &eg->nodes[s->anode[i]].at : NULL;
  for (int i = 0; i < r->nops; i++) m->o[i] = s->op[i];
}

/* ---- instances ---- */

bool pat_attrs(const Pat *p, const NodeAttrs *const *a, const Shape *const *kid_shapes, NodeAttrs *out) {
  memset(out, 0, sizeof *out);
  switch (p->ak) {
  case PA_NONE: break;
  case PA_VAR:
    if (!a[p->aslot]) return false;
    *out = *a[p->aslot];
    break;
  case PA_LIT: out->axis = p->alit; break;
  case PA_COMPOSE: {
    const NodeAttrs *q = a[p->aslot], *o = a[p->aslot2];
    if (!q || !o || q->nperm != o->nperm) return false;
    out->nperm = o->nperm;
    for (int i = 0; i < o->nperm; i++) out->perm[i] = q->perm[o->perm[i]];
    break;
  }
  }
  if (p->pseudo == PSEUDO_T) {
    int r = kid_shapes[0]->rank;
    if (r < 2) return false;
    out->nperm = r;
    for (int i = 0; i < r; i++) out->perm[i] = i;
    out->perm[r - 2] = r - 1;
    out->perm[r - 1] = r - 2;
  }
  if (p->pseudo == PSEUDO_COLUMN) {
    const Shape *g = kid_shapes[0];
    if (g->rank < 1) return false;
    for (int i = 0; i + 1 < g->rank; i++)
      if (g->d[i].n != 1) return false;
    out->shape = (Shape){.rank = 2, .d = {g->d[g->rank - 1], {1, NULL}}};
  }
  return true;
}

/* The shape iota_along@ax gives x: size 1 but for x's axis ax; *n that size. */
static bool iota_along_shape(const Shape *x, int axis, Shape *out, Dim *n) {
  int ax = axis_norm(axis, x->rank);
  if (ax < 0) return false;
  *out = (Shape){.rank = x->rank};
  for (int i = 0; i < x->rank; i++) out->d[i] = (Dim){1, NULL};
  out->d[ax] = x->d[ax];
  *n = x->d[ax];
  return true;
}

bool pat_shape(const Pat *p, const MatchView *m, EgFacts *out) { return pat_shape_ex(p, m, false, out); }

bool pat_shape_ex(const Pat *p, const MatchView *m, bool no_identity, EgFacts *out) {
  switch (p->kind) {
  case PAT_VAR:
    if (!m->v[p->var]) return false;
    *out = *m->v[p->var];
    return true;
  case PAT_NUM:
    *out = (EgFacts){.kind = EK_REAL, .is_const = true, .value = p->num, .sign = p->num > 0 ? SIGN_POS : p->num >= 0 ? SIGN_NONNEG : SIGN_ANY};
    return true;
  case PAT_OP: break;
  }
  EgFacts kf[16];
  const Shape *ks[16];
  ElemKind kk[16];
  for (int i = 0; i < p->nkids; i++) {
    if (!pat_shape_ex(p->kids[i], m, no_identity, &kf[i])) return false;
    ks[i] = &kf[i].shape;
    kk[i] = kf[i].kind;
  }
  NodeAttrs at;
  if (!pat_attrs(p, m->a, ks, &at)) return false;
  if (no_identity && p->nkids == 1 && p->opvar < 0 && p->op == OP_RESHAPE && shape_equal(&at.shape, ks[0]))
    return false;
  *out = (EgFacts){0};
  if (p->pseudo == PSEUDO_IOTA_ALONG) {
    Dim n;
    out->kind = EK_INT;
    out->sign = SIGN_NONNEG;
    return iota_along_shape(ks[0], at.axis, &out->shape, &n);
  }
  Op op = p->opvar >= 0 ? m->o[p->opvar] : p->op;
  if (op == OP_COUNT) return false;
  if (!op_result(op, &at, ks, kk, p->nkids, &out->shape, &out->kind, NULL, 0)) return false;
  return true;
}

int pat_add(EGraph *eg, const Pat *p, const Binding *b) {
  switch (p->kind) {
  case PAT_VAR: return b->cls[p->var];
  case PAT_NUM: {
    NodeAttrs ca = {.value = p->num, .kind = EK_REAL};
    return eg_add(eg, OP_CONST, &ca, NULL, 0);
  }
  case PAT_OP: break;
  }
  int kids[16];
  const Shape *ks[16];
  for (int i = 0; i < p->nkids; i++) {
    kids[i] = pat_add(eg, p->kids[i], b);
    if (kids[i] < 0) return -1;
  }
  for (int i = 0; i < p->nkids; i++) ks[i] = &eg->classes[eg_find(eg, kids[i])].f.shape;
  const NodeAttrs *ap[PAT_MAXA];
  for (int i = 0; i < PAT_MAXA; i++) ap[i] = &b->a[i];
  NodeAttrs at;
  if (!pat_attrs(p, ap, ks, &at)) return -1;
  if (p->pseudo == PSEUDO_IOTA_ALONG) {
    Shape s;
    Dim n;
    if (!iota_along_shape(ks[0], at.axis, &s, &n)) return -1;
    NodeAttrs ia = {.shape = {.rank = 1, .d = {n}}};
    int io = eg_add(eg, OP_IOTA, &ia, NULL, 0);
    if (io < 0) return -1;
    NodeAttrs ra = {.shape = s};
    return eg_add(eg, OP_RESHAPE, &ra, &io, 1);
  }
  Op op = p->opvar >= 0 ? b->o[p->opvar] : p->op;
  return eg_add(eg, op, &at, kids, p->nkids);
}
