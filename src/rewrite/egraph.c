/*
 * egraph.c: the e-graph: hash-consed e-nodes, union-find over classes,
 * deferred rebuilding and the class analysis.
 *
 * Storage.  E-nodes and classes are arrays indexed by id, in one arena the
 * EGraph owns (eg_free releases everything).  An e-node's result shape and
 * kind come from op_result (shape.c) when it is added, so every e-node is
 * well-formed; an e-node op_result rejects is never added.
 *
 * Hash-consing.  The memo is an open-addressing table of e-node ids hashed by
 * op, the attributes the op uses, the result shape's sizes and the canonical
 * child classes; lookups compare with the stored e-node's children passed
 * through find, so an entry whose children merged since it was inserted
 * still answers correctly.  Unions do not touch the memo: eg_rebuild (egg's
 * deferred rebuilding) re-canonicalizes every live e-node in id order,
 * re-inserts it, merges the classes of e-nodes that became equal
 * (congruence) and marks the later one dead, repeating until nothing
 * merges; it then rebuilds each class's e-node list and runs the analysis.
 * A full pass is O(e-nodes) and there are a few per runner iteration, which
 * at tens of thousands of e-nodes costs well under a millisecond each.
 *
 * Analysis.  Per class: shape, kind (fixed: a union of classes that differ
 * in either is a bug in a rule), a constant value (every element equal;
 * scalar arithmetic is folded when the result is finite and not -0.0, the
 * front end's rule, and the value then joins the class as a CONST e-node)
 * and a sign fact over the reals.  Facts only grow (unknown -> nonneg ->
 * positive; no constant -> constant), so the fixpoint terminates.
 * Transcendental functions are not folded: their value would depend on the
 * C library, and the interpreter is the reference.
 *
 * Determinism.  Ids are handed out in order, every walk is in id order, and
 * hashes mix only ids and attribute bits, never pointers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egraph.h"

/* ---- memory ---- */

EGraph *eg_new(Ctx *c, const Graph *src) {
  Arena *a = arena_new();
  EGraph *eg = arena_alloc(a, sizeof *eg);
  eg->arena = a;
  eg->ctx = c;
  eg->src = src;
  eg->root = -1;
  eg->cur_rule = -1;
  eg->memo_cap = 1024;
  eg->memo = arena_alloc(a, sizeof(int) * (size_t)eg->memo_cap);
  memset(eg->memo, -1, sizeof(int) * (size_t)eg->memo_cap);
  return eg;
}

void eg_free(EGraph *eg) {
  if (eg) arena_free(eg->arena);
}

void *eg_alloc(EGraph *eg, size_t n) { return arena_alloc(eg->arena, n); }

int eg_find(EGraph *eg, int c) {
  while (eg->uf[c] != c) {
    eg->uf[c] = eg->uf[eg->uf[c]]; /* path halving */
    c = eg->uf[c];
  }
  return c;
}

const EgFacts *eg_facts(EGraph *eg, int cls) { return &eg->classes[eg_find(eg, cls)].f; }
int eg_num_nodes(const EGraph *eg) { return eg->nlive; }
int eg_num_classes(const EGraph *eg) { return eg->nroots; }
int eg_root(EGraph *eg) { return eg->root < 0 ? -1 : eg_find(eg, eg->root); }

int eg_class_of(EGraph *eg, const Node *n) {
  if (!eg->src || !eg->node_class || n->id < 0 || n->id >= eg->src->nnodes || eg->src->nodes[n->id] != n) return -1;
  return eg_find(eg, eg->node_class[n->id]);
}

/* ---- attributes and hashing ---- */

bool eg_safe_const(double v) { return isfinite(v) && !(v == 0 && signbit(v)); }

/* Only the attributes op uses, the rest zero: equal e-nodes hash equally. */
static NodeAttrs clean_attrs(Op op, const NodeAttrs *at) {
  NodeAttrs c = {0};
  switch (op_info[op].attrs) {
  case ATTR_NONE: break;
  case ATTR_INPUT:
  case ATTR_VALUE: c.value = at->value; break;
  case ATTR_SIZE: break;
  case ATTR_AXIS: c.axis = at->axis; break;
  case ATTR_PERM:
    c.nperm = at->nperm;
    memcpy(c.perm, at->perm, sizeof(int) * (size_t)(at->nperm <= TS_MAX_RANK ? at->nperm : 0));
    break;
  case ATTR_SLICE:
    c.axis = at->axis;
    c.lo = at->lo;
    c.hi = at->hi;
    break;
  }
  c.shape = at->shape; /* the requested shape of INPUT, IOTA, RESHAPE */
  c.kind = at->kind;
  return c;
}

bool attrs_equal(Op op, const NodeAttrs *a, const NodeAttrs *b) {
  switch (op_info[op].attrs) {
  case ATTR_NONE: return op != OP_RESHAPE || shape_equal(&a->shape, &b->shape);
  case ATTR_INPUT:
  case ATTR_VALUE: return a->kind == b->kind && memcmp(&a->value, &b->value, sizeof a->value) == 0;
  case ATTR_SIZE: {
    /* iota N and iota V are different nodes even where N = V: a plan made
       at such sizes must carry over to sizes where they differ */
    const char *x = a->shape.d[0].sym, *y = b->shape.d[0].sym;
    return a->shape.d[0].n == b->shape.d[0].n && (x == y || (x && y && !strcmp(x, y)));
  }
  case ATTR_AXIS: return a->axis == b->axis;
  case ATTR_PERM: return a->nperm == b->nperm && !memcmp(a->perm, b->perm, sizeof(int) * (size_t)a->nperm);
  case ATTR_SLICE: return a->axis == b->axis && a->lo == b->lo && a->hi == b->hi;
  }
  return false;
}

static uint64_t hash_node(Op op, const NodeAttrs *at, const int *kids, int nin) {
  uint64_t h = hash_mix((uint64_t)op * 31 + (uint64_t)at->kind, (uint64_t)at->shape.rank);
  for (int i = 0; i < at->shape.rank; i++) h = hash_mix(h, (uint64_t)at->shape.d[i].n);
  for (int i = 0; i < nin; i++) h = hash_mix(h, (uint64_t)kids[i]);
  uint64_t bits;
  memcpy(&bits, &at->value, sizeof bits);
  h = hash_mix(h, bits);
  h = hash_mix(h, (uint64_t)at->axis);
  h = hash_mix(h, (uint64_t)at->lo);
  h = hash_mix(h, (uint64_t)at->hi);
  for (int i = 0; i < at->nperm && i < TS_MAX_RANK; i++) h = hash_mix(h, (uint64_t)at->perm[i]);
  return h;
}

/* Is e-node e (children through find) the same as (op, at, kids)? */
static bool node_is(EGraph *eg, const ENode *e, Op op, const NodeAttrs *at, const int *kids, int nin) {
  if (e->op != op || e->nin != nin || e->at.kind != at->kind || !shape_equal(&e->at.shape, &at->shape))
    return false;
  if (!attrs_equal(op, &e->at, at)) return false;
  for (int i = 0; i < nin; i++)
    if (eg_find(eg, e->kids[i]) != kids[i]) return false;
  return true;
}

/* ---- the memo ---- */

static int memo_lookup(EGraph *eg, uint64_t h, Op op, const NodeAttrs *at, const int *kids, int nin) {
  size_t mask = (size_t)eg->memo_cap - 1;
  for (size_t k = h & mask;; k = (k + 1) & mask) {
    int id = eg->memo[k];
    if (id < 0) return -1;
    const ENode *e = &eg->nodes[id];
    if (e->hash == h && node_is(eg, e, op, at, kids, nin)) return id;
  }
}

static void memo_put(EGraph *eg, int id) {
  size_t mask = (size_t)eg->memo_cap - 1, k = eg->nodes[id].hash & mask;
  while (eg->memo[k] >= 0) k = (k + 1) & mask;
  eg->memo[k] = id;
  eg->memo_used++;
}

static void memo_clear(EGraph *eg, int want) {
  int cap = eg->memo_cap;
  while (cap < 2 * want + 16) cap *= 2;
  if (cap != eg->memo_cap) {
    eg->memo = arena_alloc(eg->arena, sizeof(int) * (size_t)cap);
    eg->memo_cap = cap;
  }
  memset(eg->memo, -1, sizeof(int) * (size_t)cap);
  eg->memo_used = 0;
}

static void memo_insert(EGraph *eg, int id) {
  if (2 * (eg->memo_used + 1) > eg->memo_cap) {
    int *old = eg->memo, oldcap = eg->memo_cap;
    eg->memo_cap *= 2;
    eg->memo = arena_alloc(eg->arena, sizeof(int) * (size_t)eg->memo_cap);
    memset(eg->memo, -1, sizeof(int) * (size_t)eg->memo_cap);
    eg->memo_used = 0;
    for (int k = 0; k < oldcap; k++)
      if (old[k] >= 0) memo_put(eg, old[k]);
  }
  memo_put(eg, id);
}

/* ---- the analysis ---- */

static EgSign sign_of_value(double v) { return v > 0 ? SIGN_POS : v >= 0 ? SIGN_NONNEG : SIGN_ANY; }
static EgSign sign_min(EgSign a, EgSign b) { return a < b ? a : b; }
static EgSign sign_max(EgSign a, EgSign b) { return a > b ? a : b; }

/* Scalar folds: exact IEEE operations only (sqrt is correctly rounded). */
static bool fold1(Op op, double a, double *r) {
  switch (op) {
  case OP_NEG: *r = -a; return true;
  case OP_ABS: *r = fabs(a); return true;
  case OP_RELU: *r = isnan(a) || a > 0 ? a : 0.0; return true;
  case OP_CAST: *r = a; return true;
  case OP_SQRT: *r = sqrt(a); return true;
  default: return false;
  }
}

/* A product or quotient of nonzero numbers that underflowed (to zero or
   a subnormal) is not the real value by a wide margin: a folded 1e-300 *
   1e-300 = 0 would let later rules divide by it, and the saturation then
   equates unrelated constants (a sum or difference that rounds to a
   subnormal is exact and may fold). */
static bool underflowed(double a, double r) { return a != 0 && (r == 0 || fpclassify(r) == FP_SUBNORMAL); }

static bool fold2(Op op, double a, double b, double *r) {
  switch (op) {
  case OP_ADD: *r = a + b; return true;
  case OP_SUB: *r = a - b; return true;
  case OP_MUL: *r = a * b; return b == 0 || !underflowed(a, *r);
  case OP_DIV: *r = a / b; return !underflowed(a, *r);
  case OP_MAX: *r = isnan(a) ? a : isnan(b) ? b : a >= b ? a : b; return true;
  case OP_MIN: *r = isnan(a) ? a : isnan(b) ? b : a <= b ? a : b; return true;
  case OP_IDIV: *r = idiv_euclid(a, b); return true; /* integers (its kind): exact */
  default: return false;
  }
}

/* The sign of an op's value from its operands' facts (k), its constant
   (value), reduction axis and whether its two operands are one value (x·x):
   the e-graph's class analysis and node_sign (graphs) both ask it. */
EgSign eg_sign_rule(Op op, double value, int axis, bool same_kids, int nin, const EgFacts *const *k) {
  switch (op) {
  case OP_INPUT: return SIGN_ANY;
  case OP_CONST: return sign_of_value(value);
  case OP_IOTA: return SIGN_NONNEG;
  case OP_EXP:
  case OP_SIGMOID: return SIGN_POS;
  case OP_RSQRT: return SIGN_POS;
  case OP_SQRT:
  case OP_RELU:
  case OP_ABS: return SIGN_NONNEG;
  case OP_NEG:
  case OP_LOG:
  case OP_TANH:
  case OP_ERF: return SIGN_ANY;
  case OP_CAST: return k[0]->kind == EK_BOOL ? SIGN_NONNEG : k[0]->sign;
  case OP_ADD:
    if (sign_min(k[0]->sign, k[1]->sign) >= SIGN_NONNEG) return sign_max(k[0]->sign, k[1]->sign);
    return SIGN_ANY;
  case OP_MUL:
    if (same_kids) return sign_max(SIGN_NONNEG, k[0]->sign);
    return sign_min(k[0]->sign, k[1]->sign);
  case OP_DIV: return k[1]->sign == SIGN_POS ? k[0]->sign : SIGN_ANY;
  case OP_IDIV: return k[0]->sign >= SIGN_NONNEG && k[1]->sign == SIGN_POS ? SIGN_NONNEG : SIGN_ANY;
  case OP_POW: return k[0]->sign;
  case OP_MAX: return sign_max(k[0]->sign, k[1]->sign);
  case OP_MIN: return sign_min(k[0]->sign, k[1]->sign);
  case OP_SUB: return SIGN_ANY;
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE: return SIGN_NONNEG;
  case OP_SELECT: return sign_min(k[1]->sign, k[2]->sign);
  case OP_SUM: return k[0]->shape.d[axis].n > 0 ? k[0]->sign : sign_min(k[0]->sign, SIGN_NONNEG);
  case OP_AMAX:
  case OP_AMIN: return k[0]->sign;
  case OP_MATMUL: {
    EgSign s = sign_min(k[0]->sign, k[1]->sign);
    int64_t K = k[0]->shape.d[k[0]->shape.rank - 1].n;
    return K > 0 ? s : sign_min(s, SIGN_NONNEG);
  }
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE: return k[0]->sign;
  case OP_CONCAT: {
    EgSign s = SIGN_POS;
    for (int i = 0; i < nin; i++) s = sign_min(s, k[i]->sign);
    return s;
  }
  case OP_GATHER: return k[0]->sign;
  case OP_COUNT: break;
  }
  return SIGN_ANY;
}

/* The sign fact of a graph node's value by the same rule, from its
   operands' (memo[id]: -1 unknown yet; sized by the graph's nodes): a walk
   with its own stack, operands first, however deep the graph. */
EgSign node_sign(const Node *n, int8_t *memo) {
  int cap = 64, sp = 0;
  const Node **stack = malloc(sizeof *stack * (size_t)cap);
  stack[sp++] = n;
  while (sp) {
    const Node *t = stack[sp - 1];
    if (memo[t->id] >= 0) {
      sp--;
      continue;
    }
    bool ready = true;
    for (int i = 0; i < t->nin; i++)
      if (memo[t->in[i]->id] < 0) {
        ready = false;
        if (sp == cap) stack = realloc(stack, sizeof *stack * (size_t)(cap *= 2));
        stack[sp++] = t->in[i];
      }
    if (!ready) continue;
    EgSign r = SIGN_ANY;
    if (t->kind == EK_BOOL) {
      r = SIGN_NONNEG;
    } else if (t->nin <= 8) {
      EgFacts kf[8];
      const EgFacts *kp[8];
      for (int i = 0; i < t->nin; i++) {
        kf[i] = (EgFacts){.shape = t->in[i]->shape, .kind = t->in[i]->kind, .sign = (EgSign)memo[t->in[i]->id]};
        kp[i] = &kf[i];
      }
      r = eg_sign_rule(t->op, t->value, t->axis, t->nin == 2 && t->in[0] == t->in[1], t->nin, kp);
    }
    memo[t->id] = (int8_t)r;
    sp--;
  }
  free(stack);
  return (EgSign)memo[n->id];
}

/* The constant every element of e's value equals, if the kids' facts tell. */
static bool const_rule(const ENode *e, const EgFacts *const *k, double *v) {
  switch (op_info[e->op].cls) {
  case OPC_LEAF:
    if (e->op == OP_CONST) return *v = e->at.value, true;
    if (e->op == OP_IOTA && e->at.shape.d[0].n == 1) return *v = 0, true;
    return false;
  case OPC_UNARY: return k[0]->is_const && fold1(e->op, k[0]->value, v);
  case OPC_BINARY: return k[0]->is_const && k[1]->is_const && fold2(e->op, k[0]->value, k[1]->value, v);
  case OPC_COMPARE:
  case OPC_SELECT:
  case OPC_MATMUL: return false;
  case OPC_REDUCE:
    /* a maximum or minimum of equal values is that value; a sum is not (rounding) */
    return e->op != OP_SUM && k[0]->is_const && (*v = k[0]->value, true);
  case OPC_LAYOUT:
  case OPC_GATHER: return k[0]->is_const && (*v = k[0]->value, true);
  case OPC_CONCAT:
    for (int i = 0; i < e->nin; i++)
      if (!k[i]->is_const || memcmp(&k[i]->value, &k[0]->value, sizeof(double))) return false;
    return *v = k[0]->value, true;
  }
  return false;
}

/* The facts e alone establishes for its class. */
static EgFacts make_facts(EGraph *eg, const ENode *e) {
  const EgFacts *small[4], **k = small;
  if (e->nin > 4) k = arena_alloc(eg->arena, sizeof *k * (size_t)e->nin);
  for (int i = 0; i < e->nin; i++) k[i] = &eg->classes[eg_find(eg, e->kids[i])].f;
  EgFacts f = {.shape = e->at.shape, .kind = e->at.kind};
  double v;
  /* a computed constant counts only if the folder may produce it; a CONST
     e-node is a constant whatever its value */
  if (const_rule(e, k, &v) && (e->op == OP_CONST || eg_safe_const(v)) && (e->at.kind != EK_INT || v == floor(v))) {
    f.is_const = true;
    f.value = v;
  }
  f.sign = e->at.kind == EK_BOOL ? SIGN_NONNEG
         : eg_sign_rule(e->op, e->at.value, e->at.axis, e->nin == 2 && eg_find(eg, e->kids[0]) == eg_find(eg, e->kids[1]),
                        e->nin, k);
  if (f.is_const) f.sign = sign_max(f.sign, sign_of_value(f.value));
  return f;
}

/* Join g into class facts f; true if f learned something. */
static bool join_facts(EgFacts *f, const EgFacts *g) {
  bool changed = false;
  for (int i = 0; i < f->shape.rank && i < g->shape.rank; i++)
    if (!f->shape.d[i].sym && g->shape.d[i].sym) f->shape.d[i].sym = g->shape.d[i].sym;
  if (!f->is_const && g->is_const) {
    f->is_const = true;
    f->value = g->value;
    changed = true;
  }
  if (g->sign > f->sign) {
    f->sign = g->sign;
    changed = true;
  }
  return changed;
}

/* ---- adding ---- */

static int new_class(EGraph *eg, const EgFacts *f) {
  if (eg->nclasses == eg->classes_cap) {
    int nc = eg->classes_cap ? eg->classes_cap * 2 : 256;
    eg->classes = arena_realloc(eg->arena, eg->classes, sizeof(EClass) * (size_t)eg->classes_cap,
                                sizeof(EClass) * (size_t)nc);
    eg->uf = arena_realloc(eg->arena, eg->uf, sizeof(int) * (size_t)eg->classes_cap, sizeof(int) * (size_t)nc);
    eg->classes_cap = nc;
  }
  int c = eg->nclasses++;
  eg->uf[c] = c;
  eg->classes[c] = (EClass){.f = *f};
  eg->nroots++;
  return c;
}

static void class_push(EGraph *eg, EClass *c, int id) {
  if (c->nnodes == c->cap) {
    int nc = c->cap ? c->cap * 2 : 4;
    c->nodes = arena_realloc(eg->arena, c->nodes, sizeof(int) * (size_t)c->cap, sizeof(int) * (size_t)nc);
    c->cap = nc;
  }
  c->nodes[c->nnodes++] = id;
}

/* Is the operation the identity on its operand (the builders' fast paths)? */
static bool is_identity(Op op, const NodeAttrs *at, const Shape *kid0, int nin) {
  switch (op) {
  case OP_PERMUTE:
    for (int i = 0; i < at->nperm; i++)
      if (at->perm[i] != i) return false;
    return true;
  case OP_RESHAPE: return shape_equal(&at->shape, kid0);
  case OP_SLICE: return at->lo == 0 && at->hi == kid0->d[at->axis].n;
  case OP_CONCAT: return nin == 1;
  default: return false;
  }
}

int eg_add(EGraph *eg, Op op, const NodeAttrs *at0, const int *kids0, int nin) {
  int small_k[4];
  const Shape *small_s[4];
  ElemKind small_e[4];
  int *kids = nin <= 4 ? small_k : arena_alloc(eg->arena, sizeof(int) * (size_t)nin);
  const Shape **sh = nin <= 4 ? small_s : arena_alloc(eg->arena, sizeof *sh * (size_t)nin);
  ElemKind *kk = nin <= 4 ? small_e : arena_alloc(eg->arena, sizeof *kk * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    kids[i] = eg_find(eg, kids0[i]);
    sh[i] = &eg->classes[kids[i]].f.shape;
    kk[i] = eg->classes[kids[i]].f.kind;
  }
  NodeAttrs at = clean_attrs(op, at0);
  Shape s;
  ElemKind k;
  if (!op_result(op, &at, sh, kk, nin, &s, &k, NULL, 0)) return -1;
  if (op_info[op].attrs == ATTR_AXIS || op_info[op].attrs == ATTR_SLICE) at.axis = axis_norm(at.axis, sh[0]->rank);
  at.shape = s;
  at.kind = k;
  if (nin >= 1 && is_identity(op, &at, sh[0], nin)) return kids[0];
  uint64_t h = hash_node(op, &at, kids, nin);
  int found = memo_lookup(eg, h, op, &at, kids, nin);
  if (found >= 0) return eg_find(eg, eg->nodes[found].cls);
  if (eg->nnodes == eg->nodes_cap) {
    int nc = eg->nodes_cap ? eg->nodes_cap * 2 : 1024;
    eg->nodes = arena_realloc(eg->arena, eg->nodes, sizeof(ENode) * (size_t)eg->nodes_cap,
                              sizeof(ENode) * (size_t)nc);
    eg->nodes_cap = nc;
  }
  int id = eg->nnodes++;
  ENode *e = &eg->nodes[id];
  *e = (ENode){.op = op, .at = at, .nin = nin, .rule = eg->cur_rule, .hash = h, .pos = eg->cur_pos,
               .site = eg->cur_site, .via = eg->cur_via};
  e->kids = arena_alloc(eg->arena, sizeof(int) * (size_t)(nin ? nin : 1));
  memcpy(e->kids, kids, sizeof(int) * (size_t)nin);
  EgFacts f = make_facts(eg, e);
  e->cls = new_class(eg, &f);
  class_push(eg, &eg->classes[e->cls], id);
  eg->nlive++;
  memo_insert(eg, id);
  int c = e->cls;
  /* a folded scalar joins its class as a CONST e-node (egg's modify) */
  if (f.is_const && s.rank == 0 && op != OP_CONST && k != EK_BOOL && eg_safe_const(f.value)) {
    NodeAttrs ca = {.value = f.value, .kind = k};
    int cc = eg_add(eg, OP_CONST, &ca, NULL, 0);
    if (cc >= 0) eg_union(eg, c, cc);
  }
  return eg_find(eg, c);
}

int eg_add_input(EGraph *eg, const Node *in) {
  NodeAttrs at = {.value = (double)in->input_index, .shape = in->shape, .kind = in->kind};
  int before = eg->nnodes;
  int c = eg_add(eg, OP_INPUT, &at, NULL, 0);
  if (c >= 0 && eg->nnodes > before) {
    ENode *e = &eg->nodes[eg->nnodes - 1];
    e->name = in->name;
    e->role = in->role;
    e->input_index = in->input_index;
  }
  return c;
}

/* ---- merging ---- */

bool eg_union(EGraph *eg, int a, int b) {
  a = eg_find(eg, a);
  b = eg_find(eg, b);
  if (a == b) return false;
  EClass *ca = &eg->classes[a], *cb = &eg->classes[b];
  if (!shape_equal(&ca->f.shape, &cb->f.shape) || ca->f.kind != cb->f.kind) {
#ifdef TS_DEBUG
    char sa[256], sb[256];
    fprintf(stderr, "tilesmith: internal error: e-graph union of classes %d %s and %d %s (a rule changed a shape)\n",
            a, shape_str(&ca->f.shape, sa, sizeof sa), b, shape_str(&cb->f.shape, sb, sizeof sb));
    abort();
#else
    return false;
#endif
  }
  int root = a < b ? a : b, other = a ^ b ^ root;
  EClass *r = &eg->classes[root], *o = &eg->classes[other];
  eg->uf[other] = root;
  join_facts(&r->f, &o->f);
  for (int i = 0; i < o->nnodes; i++) class_push(eg, r, o->nodes[i]);
  o->nnodes = 0;
  eg->nroots--;
  eg->dirty = true;
  return true;
}

/* ---- rebuilding ---- */

/* One congruence pass: canonicalize and re-insert every live e-node; merge
   the classes of e-nodes that became equal.  True if anything merged. */
static bool congruence_pass(EGraph *eg) {
  bool merged = false;
  memo_clear(eg, eg->nlive);
  for (int id = 0; id < eg->nnodes; id++) {
    ENode *e = &eg->nodes[id];
    if (e->dead) continue;
    for (int i = 0; i < e->nin; i++) e->kids[i] = eg_find(eg, e->kids[i]);
    e->hash = hash_node(e->op, &e->at, e->kids, e->nin);
    int x = memo_lookup(eg, e->hash, e->op, &e->at, e->kids, e->nin);
    if (x < 0) {
      memo_put(eg, id);
      continue;
    }
    e->dead = true;
    eg->nlive--;
    merged |= eg_union(eg, eg->nodes[x].cls, e->cls);
  }
  return merged;
}

static void rebuild_lists(EGraph *eg) {
  for (int c = 0; c < eg->nclasses; c++) eg->classes[c].nnodes = 0;
  for (int id = 0; id < eg->nnodes; id++)
    if (!eg->nodes[id].dead) class_push(eg, &eg->classes[eg_find(eg, eg->nodes[id].cls)], id);
}

static void analyse(EGraph *eg) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (int id = 0; id < eg->nnodes; id++) {
      if (eg->nodes[id].dead) continue;
      EgFacts f = make_facts(eg, &eg->nodes[id]);
      changed |= join_facts(&eg->classes[eg_find(eg, eg->nodes[id].cls)].f, &f);
    }
  }
}

/* Give each scalar constant class a CONST e-node; true if any was added. */
static bool add_constants(EGraph *eg) {
  int n = eg->nclasses;
  for (int c = 0; c < n; c++) {
    EClass *cl = &eg->classes[c];
    if (eg->uf[c] != c || !cl->f.is_const || cl->f.shape.rank || cl->f.kind == EK_BOOL || !eg_safe_const(cl->f.value))
      continue;
    bool has = false;
    for (int i = 0; i < cl->nnodes && !has; i++) has = eg->nodes[cl->nodes[i]].op == OP_CONST;
    if (has) continue;
    NodeAttrs ca = {.value = cl->f.value, .kind = cl->f.kind};
    int cc = eg_add(eg, OP_CONST, &ca, NULL, 0);
    if (cc >= 0) eg_union(eg, c, cc);
  }
  return eg->dirty;
}

void eg_rebuild(EGraph *eg) {
  for (;;) {
    while (congruence_pass(eg)) {
    }
    eg->dirty = false;
    rebuild_lists(eg);
    analyse(eg);
    if (!add_constants(eg)) break;
  }
}

/* ---- from a graph ---- */

EGraph *eg_from_graph(const Graph *g) {
  EGraph *eg = eg_new(g->ctx, g);
  int *cls = arena_alloc(eg->arena, sizeof(int) * (size_t)(g->nnodes ? g->nnodes : 1));
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    eg->cur_pos = n->pos;
    eg->cur_site = n->site;
    eg->cur_via = n->via;
    if (n->op == OP_INPUT) {
      cls[i] = eg_add_input(eg, n);
    } else {
      int small[4], *kids = n->nin <= 4 ? small : arena_alloc(eg->arena, sizeof(int) * (size_t)n->nin);
      for (int j = 0; j < n->nin; j++) kids[j] = cls[n->in[j]->id];
      NodeAttrs at = node_attrs(n);
      cls[i] = eg_add(eg, n->op, &at, kids, n->nin);
    }
    if (cls[i] < 0) {
      eg_free(eg);
      ts_fatal(g->ctx, "internal error: graph node %%%d (%s) is not well-formed", n->id, op_info[n->op].name);
    }
  }
  eg->node_class = cls;
  eg->root = g->output ? cls[g->output->id] : -1;
  eg->cur_pos = (Pos){0};
  eg->cur_site = (Pos){0};
  eg->cur_via = NULL;
  eg_rebuild(eg);
  return eg;
}
