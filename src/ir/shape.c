/*
 * shape.c: shapes, and the one statement of every op's shape and kind rule.
 *
 * op_result is the rule: given an op, its attributes and the shapes and
 * element kinds of its operands, it gives the result's shape and kind, or
 * false with a one-line reason (the user-facing message: the builders report
 * it at the operator's position, check_node as an invariant violation, the
 * e-graph simply refuses the e-node).  It is pure: no graph, no context, no
 * allocation.  The builders in graph.c keep only what is not a rule of the op
 * itself: implicit promotion (an integer operand beside a real one gets an
 * explicit cast), and fast paths that return an existing node (an identity
 * permutation, a reshape to the same shape, a full slice).
 *
 * Symbolic dimension names follow the operands: broadcasting keeps the named
 * side of equal sizes, a kept reduction axis, a slice and a concatenation get
 * literal sizes.  Hash-consing compares names, so this must not change.
 */
#include <ctype.h>
#include <string.h>

#include "ir.h"

int64_t shape_numel(const Shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->d[i].n;
  return n;
}

bool shape_equal(const Shape *a, const Shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i].n != b->d[i].n) return false;
  return true;
}

char *shape_str(const Shape *s, char *buf, size_t n) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, n - k, "[");
  for (int i = 0; i < s->rank && k < n; i++) {
    const Dim *d = &s->d[i];
    const char *sep = i ? ", " : "";
    if (d->sym) k += (size_t)snprintf(buf + k, n - k, "%s%s=%lld", sep, d->sym, (long long)d->n);
    else k += (size_t)snprintf(buf + k, n - k, "%s%lld", sep, (long long)d->n);
  }
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

bool shape_broadcast(const Shape *a, const Shape *b, Shape *out, int *bad_dim) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  Shape o = {.rank = r};
  for (int i = 0; i < r; i++) {
    const Dim *da = i < a->rank ? &a->d[a->rank - 1 - i] : NULL;
    const Dim *db = i < b->rank ? &b->d[b->rank - 1 - i] : NULL;
    Dim *dst = &o.d[r - 1 - i];
    if (!da) *dst = *db;
    else if (!db) *dst = *da;
    else if (da->n == db->n) *dst = da->sym ? *da : *db;
    else if (da->n == 1) *dst = *db;
    else if (db->n == 1) *dst = *da;
    else {
      if (bad_dim) *bad_dim = i;
      return false;
    }
  }
  *out = o;
  return true;
}

int axis_norm(int axis, int rank) {
  int a = axis < 0 ? axis + rank : axis;
  return a >= 0 && a < rank ? a : -1;
}

NodeAttrs node_attrs(const Node *n) {
  NodeAttrs at = {.value = n->value, .axis = n->axis, .nperm = n->op == OP_PERMUTE ? n->shape.rank : 0,
                  .lo = n->lo, .hi = n->hi, .shape = n->shape, .kind = n->kind};
  memcpy(at.perm, n->perm, sizeof at.perm);
  return at;
}

const char *elem_kind_name(ElemKind k) {
  switch (k) {
  case EK_REAL: return "real";
  case EK_INT: return "integer";
  case EK_BOOL: return "boolean";
  }
  return "?";
}

/* ---- the rules ---- */

/* op_result's failure: the reason into why, false.  WHY_NOT formats only
   when a reason is wanted (the e-graph and the rule checks ask op_result
   about many candidates and need no message). */
static bool why_not(char *why, size_t n, const char *fmt, ...) TS_PRINTF(3, 4);
static bool why_not(char *why, size_t n, const char *fmt, ...) {
  if (why && n) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
  }
  return false;
}

#define WHY_NOT(wn, ...) (why ? why_not(why, wn, __VA_ARGS__) : false)

/* Every tensor's element count, and its bytes in any type (8 at most), must
   be representable: at most 2^60 elements. */
static bool size_ok(const Shape *s, char *why, size_t wn) {
  int64_t n = 1, lim = (int64_t)1 << 60;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->d[i].n;
    if (d < 0) return WHY_NOT(wn, "dimension %d has negative size %lld", i, (long long)d);
    if (d > 0 && n > lim / d) {
      char sb[256];
      return WHY_NOT(wn, "a tensor of shape %s has more than 2^60 elements", shape_str(s, sb, sizeof sb));
    }
    n *= d;
  }
  return true;
}

static bool broadcast_ok(const char *what, const Shape *a, const Shape *b, Shape *out, char *why, size_t wn) {
  int bad;
  if (shape_broadcast(a, b, out, &bad)) return true;
  char sa[256], sb[256];
  return WHY_NOT(wn,
                 "cannot broadcast %s %s with %s: dimension %d from the end is %lld on the left and %lld on "
                 "the right",
                 what, shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb), bad + 1,
                 (long long)a->d[a->rank - 1 - bad].n, (long long)b->d[b->rank - 1 - bad].n);
}

static bool axis_ok(int axis, int rank, const char *what, int *ax, char *why, size_t wn) {
  *ax = axis_norm(axis, rank);
  if (*ax >= 0) return true;
  return WHY_NOT(wn, "%s: dim %d is out of range for a tensor of rank %d (valid: %d..%d)", what, axis,
                 rank, -rank, rank - 1);
}

static bool unary(Op op, ElemKind k, ElemKind *kout, char *why, size_t wn) {
  if (op == OP_CAST) {
    *kout = EK_REAL;
    return true;
  }
  if (k == EK_BOOL)
    return WHY_NOT(wn, "'%s' needs a numeric tensor, not a boolean mask; use 'cast' or 'select'",
                   op_info[op].name);
  *kout = op == OP_NEG || op == OP_ABS ? k : EK_REAL;
  return true;
}

static bool binary(Op op, const Shape *const *in, const ElemKind *k, Shape *out, ElemKind *kout, char *why,
                   size_t wn) {
  if (!broadcast_ok("the shapes", in[0], in[1], out, why, wn)) return false;
  if (op_info[op].cls == OPC_COMPARE) {
    if ((k[0] == EK_BOOL) != (k[1] == EK_BOOL) && op != OP_EQ && op != OP_NE)
      return WHY_NOT(wn, "cannot compare a %s tensor with a %s tensor", elem_kind_name(k[0]),
                     elem_kind_name(k[1]));
    *kout = EK_BOOL;
    return true;
  }
  if (k[0] == EK_BOOL || k[1] == EK_BOOL)
    return WHY_NOT(wn, "'%s' needs numeric operands, but one is a boolean mask; use 'cast' or 'select'",
                   op_info[op].name);
  if (op == OP_IDIV) { /* the front end gives integers idiv, never div */
    if (k[0] != EK_INT || k[1] != EK_INT)
      return WHY_NOT(wn, "'idiv' divides Index tensors (integers), not %s by %s", elem_kind_name(k[0]),
                     elem_kind_name(k[1]));
    *kout = EK_INT;
    return true;
  }
  *kout = k[0] == EK_INT && k[1] == EK_INT && op != OP_POW ? EK_INT : EK_REAL;
  return true;
}

static bool select_rule(const Shape *const *in, const ElemKind *k, Shape *out, ElemKind *kout, char *why,
                        size_t wn) {
  if (k[0] != EK_BOOL)
    return WHY_NOT(wn, "the condition of 'select' must be a boolean mask (a comparison), not a %s tensor",
                   elem_kind_name(k[0]));
  if (k[1] == EK_BOOL || k[2] == EK_BOOL) return WHY_NOT(wn, "the branches of 'select' must be numeric tensors");
  Shape s1;
  if (!broadcast_ok("the branches", in[1], in[2], &s1, why, wn)) return false;
  if (!broadcast_ok("the condition", in[0], &s1, out, why, wn)) return false;
  *kout = k[1] == k[2] ? k[1] : EK_REAL;
  return true;
}

static bool reduce(Op op, const NodeAttrs *at, const Shape *a, ElemKind k, Shape *out, ElemKind *kout,
                   char *why, size_t wn) {
  const char *name = op_info[op].name;
  if (a->rank == 0) return WHY_NOT(wn, "'%s' needs a tensor of rank at least 1, not a scalar", name);
  if (k == EK_BOOL) return WHY_NOT(wn, "'%s' needs a numeric tensor, not a boolean mask", name);
  int ax;
  if (!axis_ok(at->axis, a->rank, name, &ax, why, wn)) return false;
  if (a->d[ax].n == 0 && op != OP_SUM) return WHY_NOT(wn, "'%s' over an empty dimension has no value", name);
  *out = *a;
  out->d[ax] = (Dim){1, NULL};
  *kout = k;
  return true;
}

static bool matmul(const Shape *a, const Shape *b, const ElemKind *k, Shape *out, ElemKind *kout, char *why,
                   size_t wn) {
  char sa[256], sb[256];
  if (a->rank < 2 || b->rank < 2)
    return WHY_NOT(wn, "'⬝' needs operands of rank at least 2, got %s and %s", shape_str(a, sa, sizeof sa),
                   shape_str(b, sb, sizeof sb));
  if (k[0] == EK_BOOL || k[1] == EK_BOOL) return WHY_NOT(wn, "'⬝' needs numeric operands, not boolean masks");
  const Dim *k1 = &a->d[a->rank - 1], *k2 = &b->d[b->rank - 2];
  if (k1->n != k2->n)
    return WHY_NOT(wn,
                   "'⬝' contracts the last dimension of the left operand with the second-to-last of the "
                   "right: %s ⬝ %s has %lld against %lld",
                   shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb), (long long)k1->n, (long long)k2->n);
  Shape ba = *a, bb = *b, s;
  ba.rank -= 2;
  bb.rank -= 2;
  if (!shape_broadcast(&ba, &bb, &s, NULL))
    return WHY_NOT(wn, "the batch dimensions of %s ⬝ %s do not broadcast", shape_str(a, sa, sizeof sa),
                   shape_str(b, sb, sizeof sb));
  if (s.rank + 2 > TS_MAX_RANK) return WHY_NOT(wn, "the result has rank above %d", TS_MAX_RANK);
  s.d[s.rank] = a->d[a->rank - 2];
  s.d[s.rank + 1] = b->d[b->rank - 1];
  s.rank += 2;
  *out = s;
  *kout = EK_REAL;
  return true;
}

static bool permute(const NodeAttrs *at, const Shape *a, Shape *out, char *why, size_t wn) {
  int r = a->rank;
  if (at->nperm != r)
    return WHY_NOT(wn, "'permute' of a rank-%d tensor needs %d entries, not %d", r, r, at->nperm);
  bool seen[TS_MAX_RANK] = {0};
  *out = (Shape){.rank = r};
  for (int i = 0; i < r; i++) {
    int p = at->perm[i];
    if (p < 0 || p >= r || seen[p])
      return WHY_NOT(wn, "'permute' needs a permutation of 0..%d; entry %d is %d", r - 1, i, p);
    seen[p] = true;
    out->d[i] = a->d[p];
  }
  return true;
}

static bool reshape(const NodeAttrs *at, const Shape *a, Shape *out, char *why, size_t wn) {
  if (!size_ok(&at->shape, why, wn)) return false;
  if (shape_numel(&at->shape) != shape_numel(a)) {
    char sa[256], sb[256];
    return WHY_NOT(wn, "cannot reshape %s (%lld elements) to %s (%lld elements)", shape_str(a, sa, sizeof sa),
                   (long long)shape_numel(a), shape_str(&at->shape, sb, sizeof sb),
                   (long long)shape_numel(&at->shape));
  }
  *out = at->shape;
  return true;
}

static bool slice(const NodeAttrs *at, const Shape *a, Shape *out, char *why, size_t wn) {
  if (a->rank == 0) return WHY_NOT(wn, "'slice' needs a tensor of rank at least 1");
  int ax;
  if (!axis_ok(at->axis, a->rank, "slice", &ax, why, wn)) return false;
  int64_t n = a->d[ax].n;
  if (at->lo < 0 || at->hi < at->lo || at->hi > n)
    return WHY_NOT(wn,
                   "slice [%lld, %lld) is out of range for dimension %d of size %lld (need 0 <= lo <= hi <= %lld)",
                   (long long)at->lo, (long long)at->hi, ax, (long long)n, (long long)n);
  *out = *a;
  out->d[ax] = (Dim){at->hi - at->lo, NULL};
  return true;
}

static bool concat(const NodeAttrs *at, const Shape *const *in, const ElemKind *k, int n, Shape *out,
                   ElemKind *kout, char *why, size_t wn) {
  if (n == 0) return WHY_NOT(wn, "'concat' needs at least one tensor");
  const Shape *s0 = in[0];
  if (s0->rank == 0) return WHY_NOT(wn, "'concat' needs tensors of rank at least 1");
  int ax;
  if (!axis_ok(at->axis, s0->rank, "concat", &ax, why, wn)) return false;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    const Shape *si = in[i];
    bool ok = si->rank == s0->rank && k[i] == k[0];
    for (int d = 0; ok && d < s0->rank; d++) ok = d == ax || si->d[d].n == s0->d[d].n;
    if (!ok) {
      char a[256], b[256];
      return WHY_NOT(wn,
                     "'concat' along dim %d: tensor %d has shape %s, which does not match %s (or its element "
                     "kind differs)",
                     ax, i, shape_str(si, b, sizeof b), shape_str(s0, a, sizeof a));
    }
    total += si->d[ax].n;
  }
  *out = *s0;
  out->d[ax] = (Dim){total, NULL};
  *kout = k[0];
  return true;
}

static bool gather(const NodeAttrs *at, const Shape *x, const Shape *idx, const ElemKind *k, Shape *out,
                   ElemKind *kout, char *why, size_t wn) {
  char sa[256], sb[256];
  if (k[1] != EK_INT)
    return WHY_NOT(wn, "the indices of 'gather' must be an Index tensor, not a %s tensor",
                   elem_kind_name(k[1]));
  if (x->rank == 0 || x->rank != idx->rank)
    return WHY_NOT(wn,
                   "'gather' needs the tensor and the indices to have the same rank (at least 1): %s and %s; "
                   "reshape the indices",
                   shape_str(x, sa, sizeof sa), shape_str(idx, sb, sizeof sb));
  int ax;
  if (!axis_ok(at->axis, x->rank, "gather", &ax, why, wn)) return false;
  Shape a = *x, b = *idx;
  a.d[ax] = b.d[ax] = (Dim){1, NULL};
  if (!shape_broadcast(&a, &b, out, NULL))
    return WHY_NOT(wn, "'gather': the dimensions other than %d of %s and %s do not broadcast", ax,
                   shape_str(x, sa, sizeof sa), shape_str(idx, sb, sizeof sb));
  out->d[ax] = idx->d[ax];
  if (x->d[ax].n == 0 && idx->d[ax].n > 0) return WHY_NOT(wn, "'gather' from an empty dimension");
  *kout = k[0];
  return true;
}

static bool op_result_rule(Op op, const NodeAttrs *at, const Shape *const *in, const ElemKind *kin, int nin, Shape *out,
                           ElemKind *kout, char *why, size_t whylen);

bool op_result(Op op, const NodeAttrs *at, const Shape *const *in, const ElemKind *kin, int nin, Shape *out,
               ElemKind *kout, char *why, size_t whylen) {
  return op_result_rule(op, at, in, kin, nin, out, kout, why, whylen) && size_ok(out, why, whylen);
}

static bool op_result_rule(Op op, const NodeAttrs *at, const Shape *const *in, const ElemKind *kin, int nin, Shape *out,
                           ElemKind *kout, char *why, size_t whylen) {
  const OpInfo *oi = &op_info[op];
  if (oi->arity >= 0 && nin != oi->arity)
    return WHY_NOT(whylen, "'%s' takes %d operand%s, not %d", oi->name, oi->arity, oi->arity == 1 ? "" : "s",
                   nin);
  switch (op) {
  case OP_INPUT:
    if (!size_ok(&at->shape, why, whylen)) return false;
    *out = at->shape;
    *kout = at->kind;
    return true;
  case OP_CONST:
    *out = (Shape){.rank = 0};
    *kout = at->kind;
    return true;
  case OP_IOTA:
    if (at->shape.rank != 1) return WHY_NOT(whylen, "iota has rank 1, not %d", at->shape.rank);
    if (at->shape.d[0].n < 0)
      return WHY_NOT(whylen, "iota needs a size of at least 0, not %lld", (long long)at->shape.d[0].n);
    *out = at->shape;
    *kout = EK_INT;
    return true;
  case OP_NEG:
  case OP_EXP:
  case OP_LOG:
  case OP_SQRT:
  case OP_RSQRT:
  case OP_TANH:
  case OP_ERF:
  case OP_SIGMOID:
  case OP_RELU:
  case OP_ABS:
  case OP_CAST:
    *out = *in[0];
    return unary(op, kin[0], kout, why, whylen);
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_IDIV:
  case OP_POW:
  case OP_MAX:
  case OP_MIN:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE: return binary(op, in, kin, out, kout, why, whylen);
  case OP_SELECT: return select_rule(in, kin, out, kout, why, whylen);
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN: return reduce(op, at, in[0], kin[0], out, kout, why, whylen);
  case OP_MATMUL: return matmul(in[0], in[1], kin, out, kout, why, whylen);
  case OP_PERMUTE:
    *kout = kin[0];
    return permute(at, in[0], out, why, whylen);
  case OP_RESHAPE:
    *kout = kin[0];
    return reshape(at, in[0], out, why, whylen);
  case OP_SLICE:
    *kout = kin[0];
    return slice(at, in[0], out, why, whylen);
  case OP_CONCAT: return concat(at, in, kin, nin, out, kout, why, whylen);
  case OP_GATHER: return gather(at, in[0], in[1], kin, out, kout, why, whylen);
  case OP_COUNT: break;
  }
  return WHY_NOT(whylen, "unknown op %d", (int)op);
}

/* ---- reshapes ---- */

bool shape_reshape_map(const Shape *from, const Shape *to, int *to_of) {
  int dt = 0;
  bool whole = true;
  for (int d = 0; d < from->rank; d++) {
    to_of[d] = -1;
    if (from->d[d].n == 1 || !whole) continue;
    while (dt < to->rank && to->d[dt].n == 1) dt++;
    if (dt >= to->rank || to->d[dt].n != from->d[d].n) whole = false;
    else to_of[d] = dt++;
  }
  while (whole && dt < to->rank && to->d[dt].n == 1) dt++;
  return whole && dt == to->rank;
}

/* ---- symbolic sizes at bindings ---- */

typedef struct Sym { const char *s; const SizeArg *b; int n; bool ok; } Sym;

static int64_t sym_expr(Sym *p);

static int64_t sym_atom(Sym *p) {
  while (*p->s == ' ') p->s++;
  if (*p->s == '(') {
    p->s++;
    int64_t v = sym_expr(p);
    while (*p->s == ' ') p->s++;
    if (*p->s == ')') p->s++;
    else p->ok = false;
    return v;
  }
  if (isdigit((unsigned char)*p->s)) {
    int64_t v = 0;
    while (isdigit((unsigned char)*p->s)) v = v * 10 + (*p->s++ - '0');
    return v;
  }
  const char *start = p->s;
  while (*p->s && !strchr(" ()+-*/", *p->s)) p->s++;
  size_t len = (size_t)(p->s - start);
  for (int i = 0; i < p->n; i++)
    if (strlen(p->b[i].name) == len && !strncmp(p->b[i].name, start, len)) return p->b[i].value;
  p->ok = false;
  return 1;
}

static int64_t sym_term(Sym *p) {
  int64_t v = sym_atom(p);
  for (;;) {
    while (*p->s == ' ') p->s++;
    char op = *p->s;
    if (op != '*' && op != '/') return v;
    p->s++;
    int64_t w = sym_atom(p);
    if (op == '*') v *= w;
    else if (w) v /= w;
    else p->ok = false;
  }
}

static int64_t sym_expr(Sym *p) {
  int64_t v = sym_term(p);
  for (;;) {
    while (*p->s == ' ') p->s++;
    char op = *p->s;
    if (op != '+' && op != '-') return v;
    p->s++;
    int64_t w = sym_term(p);
    v = op == '+' ? v + w : v - w;
  }
}

bool dim_value_at(const Dim *d, const SizeArg *bind, int nbind, int64_t *out) {
  if (!d->sym) {
    *out = d->n;
    return true;
  }
  Sym p = {d->sym, bind, nbind, true};
  int64_t v = sym_expr(&p);
  if (!p.ok || *p.s) return false;
  *out = v;
  return true;
}
