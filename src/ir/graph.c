/*
 * graph.c: building the graph IR.
 *
 * Every op is built through one of the ir_* builders below.  Each computes
 * the result by the op's rule (op_result in shape.c: NumPy broadcasting for
 * elementwise ops, keep-dimension reductions, batch-broadcast matrix
 * products, ...) and reports a violation as a user error at the operator's
 * position, with both shapes.  What is left here is not a rule of the op:
 * implicit promotion (an Index beside a real operand gets an explicit cast)
 * and fast paths returning an existing node (identity permutation, a
 * permute of a permute, a reshape to the same shape, a full slice).  A built
 * node is then hash-consed: its op, kind, shape, attributes and operands are
 * hashed, and an equal node already in the graph is returned instead, so
 * equal subterms are shared.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

const OpInfo op_info[OP_COUNT] = {
#define X(e, name, arity, cls, attrs) [OP_##e] = {name, arity, cls, attrs},
#include "ops.def"
#undef X
};

static const Monoid monoids[OP_COUNT] = {
#define X(r, comb, id) [OP_##r] = {OP_##comb, id},
#include "monoids.def"
#undef X
};
static const bool has_monoid[OP_COUNT] = {
#define X(r, comb, id) [OP_##r] = true,
#include "monoids.def"
#undef X
};

const Monoid *op_monoid(Op op) {
  if (op == OP_MATMUL) op = OP_SUM;
  return (unsigned)op < OP_COUNT && has_monoid[op] ? &monoids[op] : NULL;
}

double monoid_fold(const Monoid *m, double acc, double v, bool nan_wins) {
  if (m->combine == OP_MAX) return (nan_wins && isnan(v)) || v > acc ? v : acc;
  if (m->combine == OP_MIN) return (nan_wins && isnan(v)) || v < acc ? v : acc;
  return m->combine == OP_ADD ? acc + v : NAN;
}

bool op_compare(Op op, double x, double y) {
  switch (op) {
  case OP_LT: return x < y;
  case OP_LE: return x <= y;
  case OP_GT: return x > y;
  case OP_GE: return x >= y;
  case OP_EQ: return x == y;
  case OP_NE: return x != y;
  default: return false;
  }
}

Op op_compare_not(Op op) {
  switch (op) {
  case OP_LT: return OP_GE;
  case OP_LE: return OP_GT;
  case OP_GT: return OP_LE;
  case OP_GE: return OP_LT;
  case OP_EQ: return OP_NE;
  case OP_NE: return OP_EQ;
  default: return OP_COUNT;
  }
}

Graph *graph_new(Ctx *c) {
  Graph *g = arena_alloc(c->arena, sizeof *g);
  g->ctx = c;
  g->nbuckets = 1024;
  g->buckets = arena_alloc(c->arena, sizeof(Node *) * (size_t)g->nbuckets);
  return g;
}

/* ---- hash-consing ---- */

uint64_t ir_head_hash(const Node *n) {
  uint64_t h = hash_mix((uint64_t)n->op * 31 + (uint64_t)n->kind, (uint64_t)n->shape.rank);
  for (int i = 0; i < n->shape.rank; i++) h = hash_mix(h, (uint64_t)n->shape.d[i].n);
  return h;
}

uint64_t ir_attrs_mix(uint64_t h, const Node *n, double value, int64_t lo, int64_t hi) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  h = hash_mix(h, bits);
  h = hash_mix(h, (uint64_t)n->axis);
  h = hash_mix(h, (uint64_t)lo);
  h = hash_mix(h, (uint64_t)hi);
  for (int i = 0; i < n->shape.rank; i++) h = hash_mix(h, (uint64_t)n->perm[i]);
  return h;
}

static uint64_t node_hash(const Node *n) {
  uint64_t h = ir_head_hash(n);
  for (int i = 0; i < n->nin; i++) h = hash_mix(h, (uint64_t)n->in[i]->id);
  return ir_attrs_mix(h, n, n->value, n->lo, n->hi);
}

static bool sym_equal(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

static bool node_same(const Node *a, const Node *b) {
  if (a->op != b->op || a->kind != b->kind || a->nin != b->nin || !shape_equal(&a->shape, &b->shape))
    return false;
  for (int i = 0; i < a->shape.rank; i++)
    if (!sym_equal(a->shape.d[i].sym, b->shape.d[i].sym)) return false;
  for (int i = 0; i < a->nin; i++)
    if (a->in[i] != b->in[i]) return false;
  /* bitwise, so 0.0 and -0.0 (and NaN payloads) stay distinct constants */
  if (memcmp(&a->value, &b->value, sizeof a->value) != 0) return false;
  if (a->axis != b->axis || a->lo != b->lo || a->hi != b->hi) return false;
  if (memcmp(a->perm, b->perm, sizeof a->perm) != 0) return false;
  return a->op != OP_INPUT; /* inputs are never merged */
}

static void rehash(Graph *g) {
  int nb = g->nbuckets * 2;
  Node **b = arena_alloc(g->ctx->arena, sizeof(Node *) * (size_t)nb);
  for (int i = 0; i < g->nnodes; i++) {
    Node *n = g->nodes[i];
    size_t k = n->hash & (size_t)(nb - 1);
    n->hnext = b[k];
    b[k] = n;
  }
  g->buckets = b;
  g->nbuckets = nb;
}

/* Intern a node built on the stack: return the existing equal node or a new
   arena copy appended to the graph. */
static Node *intern(Graph *g, Node *proto, Node **ins) {
  proto->in = ins;
  proto->hash = node_hash(proto);
  size_t k = proto->hash & (size_t)(g->nbuckets - 1);
  for (Node *n = g->buckets[k]; n; n = n->hnext)
    if (n->hash == proto->hash && node_same(n, proto)) return n;
  Ctx *c = g->ctx;
  if (c->max_nodes && g->nnodes >= c->max_nodes)
    ts_error(c, proto->pos, "the graph has more than %d nodes; is a fold too large?", c->max_nodes);
  Node *n = arena_alloc(c->arena, sizeof *n);
  *n = *proto;
  n->in = arena_alloc(c->arena, sizeof(Node *) * (size_t)(proto->nin ? proto->nin : 1));
  if (proto->nin) memcpy(n->in, ins, sizeof(Node *) * (size_t)proto->nin);
  n->id = g->nnodes;
  /* site: the op itself when it is written in the user's file, else the
     innermost call in the user's file that led to it */
  bool user = proto->pos.file && !proto->pos.file->is_prelude;
  n->site = user || !g->cur_site.file ? proto->pos : g->cur_site;
  n->via = user ? NULL : g->cur_via;
  if (g->nnodes == g->cap) {
    int nc = g->cap ? g->cap * 2 : 256;
    g->nodes = arena_realloc(c->arena, g->nodes, sizeof(Node *) * (size_t)g->cap,
                             sizeof(Node *) * (size_t)nc);
    g->cap = nc;
  }
  g->nodes[g->nnodes++] = n;
  n->hnext = g->buckets[k];
  g->buckets[k] = n;
  if (g->nnodes > g->nbuckets) rehash(g);
  return n;
}

static Node proto_of(Op op, ElemKind k, const Shape *s, int nin, Pos p) {
  Node n;
  memset(&n, 0, sizeof n);
  n.op = op;
  n.kind = k;
  if (s) n.shape = *s;
  n.nin = nin;
  n.pos = p;
  return n;
}

/* The node op makes of ins with attributes at, by op_result (shape and kind
   filled in, the axis normalised), or the rule's message as a user error at p. */
static Node result_or_error(Graph *g, Op op, const NodeAttrs *at, Node **ins, int nin, Pos p) {
  const Shape *small_s[4];
  ElemKind small_k[4];
  const Shape **sh = nin <= 4 ? small_s : arena_alloc(g->ctx->arena, sizeof *sh * (size_t)nin);
  ElemKind *kk = nin <= 4 ? small_k : arena_alloc(g->ctx->arena, sizeof *kk * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    sh[i] = &ins[i]->shape;
    kk[i] = ins[i]->kind;
  }
  Node n = proto_of(op, EK_REAL, NULL, nin, p);
  char why[1024];
  if (!op_result(op, at, sh, kk, nin, &n.shape, &n.kind, why, sizeof why)) ts_error(g->ctx, p, "%s", why);
  n.value = at->value;
  n.lo = at->lo;
  n.hi = at->hi;
  memcpy(n.perm, at->perm, sizeof n.perm);
  if (op_info[op].attrs == ATTR_AXIS || op_info[op].attrs == ATTR_SLICE)
    n.axis = axis_norm(at->axis, ins[0]->shape.rank);
  return n;
}

/* An Index operand mixed with a real one is promoted by an explicit cast. */
static void promote(Graph *g, Node **a, Node **b, Pos p) {
  if ((*a)->kind == (*b)->kind) return;
  if ((*a)->kind == EK_INT) *a = ir_unary(g, OP_CAST, *a, p);
  if ((*b)->kind == EK_INT) *b = ir_unary(g, OP_CAST, *b, p);
}

/* ---- leaves ---- */

Node *ir_input(Graph *g, const char *name, InputRole role, const Shape *s, Pos p) {
  NodeAttrs at = {.shape = *s, .kind = role == ROLE_INDEX ? EK_INT : EK_REAL};
  Node n = result_or_error(g, OP_INPUT, &at, NULL, 0, p);
  n.name = name;
  n.role = role;
  n.input_index = g->ninputs;
  n.value = (double)g->ninputs; /* keeps inputs distinct in the hash */
  Node *r = intern(g, &n, NULL);
  if (g->ninputs == g->inputs_cap) {
    int nc = g->inputs_cap ? g->inputs_cap * 2 : 8;
    g->inputs = arena_realloc(g->ctx->arena, g->inputs, sizeof(Node *) * (size_t)g->inputs_cap,
                              sizeof(Node *) * (size_t)nc);
    g->inputs_cap = nc;
  }
  g->inputs[g->ninputs++] = r;
  return r;
}

Node *ir_const(Graph *g, double v, Pos p) {
  NodeAttrs at = {.value = v, .kind = EK_REAL};
  Node n = result_or_error(g, OP_CONST, &at, NULL, 0, p);
  return intern(g, &n, NULL);
}

Node *ir_const_int(Graph *g, int64_t v, Pos p) {
  NodeAttrs at = {.value = (double)v, .kind = EK_INT};
  Node n = result_or_error(g, OP_CONST, &at, NULL, 0, p);
  return intern(g, &n, NULL);
}

Node *ir_iota(Graph *g, int64_t len, const char *sym, Pos p) {
  NodeAttrs at = {.shape = {.rank = 1, .d = {{len, sym}}}};
  Node n = result_or_error(g, OP_IOTA, &at, NULL, 0, p);
  return intern(g, &n, NULL);
}

/* ---- elementwise ---- */

Node *ir_unary(Graph *g, Op op, Node *a, Pos p) {
  if (op == OP_CAST && a->kind == EK_REAL) return a; /* cast of a real tensor is the tensor */
  Node n = result_or_error(g, op, &(NodeAttrs){0}, &a, 1, p);
  return intern(g, &n, &a);
}

Node *ir_binary(Graph *g, Op op, Node *a, Node *b, Pos p) {
  Node *ins[2] = {a, b};
  Node n = result_or_error(g, op, &(NodeAttrs){0}, ins, 2, p);
  if (op_info[op].cls != OPC_COMPARE) promote(g, &ins[0], &ins[1], p);
  return intern(g, &n, ins);
}

Node *ir_select(Graph *g, Node *c, Node *a, Node *b, Pos p) {
  Node *ins[3] = {c, a, b};
  Node n = result_or_error(g, OP_SELECT, &(NodeAttrs){0}, ins, 3, p);
  promote(g, &ins[1], &ins[2], p);
  return intern(g, &n, ins);
}

Node *ir_reduce(Graph *g, Op op, Node *a, int axis, Pos p) {
  Node n = result_or_error(g, op, &(NodeAttrs){.axis = axis}, &a, 1, p);
  return intern(g, &n, &a);
}

Node *ir_matmul(Graph *g, Node *a, Node *b, Pos p) {
  Node *ins[2] = {a, b};
  Node n = result_or_error(g, OP_MATMUL, &(NodeAttrs){0}, ins, 2, p);
  for (int i = 0; i < 2; i++)
    if (ins[i]->kind == EK_INT) ins[i] = ir_unary(g, OP_CAST, ins[i], p);
  return intern(g, &n, ins);
}

/* ---- data movement ---- */

Node *ir_permute(Graph *g, Node *a, const int *perm, int np, Pos p) {
  NodeAttrs at = {.nperm = np};
  for (int i = 0; i < np && i < TS_MAX_RANK; i++) at.perm[i] = perm[i];
  Node n = result_or_error(g, OP_PERMUTE, &at, &a, 1, p);
  int r = a->shape.rank;
  bool identity = true;
  for (int i = 0; i < r; i++) identity &= perm[i] == i;
  if (identity) return a;
  /* a permute of a permute is one permute */
  if (a->op == OP_PERMUTE) {
    int comp[TS_MAX_RANK];
    for (int i = 0; i < r; i++) comp[i] = a->perm[perm[i]];
    return ir_permute(g, a->in[0], comp, r, p);
  }
  return intern(g, &n, &a);
}

Node *ir_transpose(Graph *g, Node *a, Pos p) {
  int r = a->shape.rank;
  if (r < 2) ts_error(g->ctx, p, "'ᵀ' swaps the last two dimensions and needs rank at least 2, not %d", r);
  int perm[TS_MAX_RANK];
  for (int i = 0; i < r; i++) perm[i] = i;
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return ir_permute(g, a, perm, r, p);
}

Node *ir_reshape(Graph *g, Node *a, const Shape *s, Pos p) {
  Node n = result_or_error(g, OP_RESHAPE, &(NodeAttrs){.shape = *s}, &a, 1, p);
  if (a->op == OP_RESHAPE) a = a->in[0];
  if (shape_equal(&a->shape, s)) {
    bool same_syms = true;
    for (int i = 0; i < s->rank; i++) same_syms &= sym_equal(a->shape.d[i].sym, s->d[i].sym);
    if (same_syms) return a;
  }
  return intern(g, &n, &a);
}

Node *ir_slice(Graph *g, Node *a, int axis, int64_t lo, int64_t hi, Pos p) {
  Node n = result_or_error(g, OP_SLICE, &(NodeAttrs){.axis = axis, .lo = lo, .hi = hi}, &a, 1, p);
  if (lo == 0 && hi == a->shape.d[n.axis].n) return a;
  return intern(g, &n, &a);
}

Node *ir_concat(Graph *g, Node **xs, int n, int axis, Pos p) {
  if (n == 1) return xs[0];
  Node nd = result_or_error(g, OP_CONCAT, &(NodeAttrs){.axis = axis}, xs, n, p);
  return intern(g, &nd, xs);
}

Node *ir_gather(Graph *g, Node *x, Node *idx, int axis, Pos p) {
  Node *ins[2] = {x, idx};
  Node n = result_or_error(g, OP_GATHER, &(NodeAttrs){.axis = axis}, ins, 2, p);
  return intern(g, &n, ins);
}

/* ---- invariants ---- */

static bool fail(FILE *err, const Node *n, const char *what) {
  if (err) fprintf(err, "graph invariant violated at %%%d (%s): %s\n", n->id, op_info[n->op].name, what);
  return false;
}

/* The node's shape and kind must be what its op's rule (op_result) gives
   its operands, recomputed from scratch (the builders' fast paths and
   promotions are not trusted). */
static bool check_node(const Graph *g, const Node *n, FILE *err) {
  const OpInfo *oi = &op_info[n->op];
  if (oi->arity >= 0 && n->nin != oi->arity) return fail(err, n, "wrong number of operands");
  for (int i = 0; i < n->nin; i++)
    if (!n->in[i] || n->in[i]->id >= n->id || g->nodes[n->in[i]->id] != n->in[i])
      return fail(err, n, "operand not earlier in the graph");
  if (n->shape.rank < 0 || n->shape.rank > TS_MAX_RANK) return fail(err, n, "bad rank");
  if (n->op == OP_INPUT && (n->input_index >= g->ninputs || g->inputs[n->input_index] != n))
    return fail(err, n, "input not in the input list");
  const Shape *small_s[4];
  ElemKind small_k[4];
  const Shape **sh = n->nin <= 4 ? small_s : malloc(sizeof *sh * (size_t)n->nin);
  ElemKind *kk = n->nin <= 4 ? small_k : malloc(sizeof *kk * (size_t)n->nin);
  if (!sh || !kk) {
    if (sh != small_s) free(sh);
    return fail(err, n, "out of memory checking the node");
  }
  for (int i = 0; i < n->nin; i++) {
    sh[i] = &n->in[i]->shape;
    kk[i] = n->in[i]->kind;
  }
  NodeAttrs at = node_attrs(n);
  Shape s;
  ElemKind k;
  char why[1024];
  bool ok = op_result(n->op, &at, sh, kk, n->nin, &s, &k, why, sizeof why);
  if (sh != small_s) free(sh);
  if (kk != small_k) free(kk);
  if (!ok) return fail(err, n, why);
  if (!shape_equal(&s, &n->shape)) return fail(err, n, "shape is not what the op gives its operands");
  if (k != n->kind) return fail(err, n, "element kind is not what the op gives its operands");
  return true;
}

bool graph_check(const Graph *g, FILE *err) {
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (n->id != i) return fail(err, n, "id does not match position");
    if (!check_node(g, n, err)) return false;
    /* hash table: the node must be findable under its hash */
    bool found = false;
    for (Node *m = g->buckets[n->hash & (size_t)(g->nbuckets - 1)]; m && !found; m = m->hnext)
      found = m == n;
    if (!found) return fail(err, n, "not in the hash table");
  }
  if (g->output && (g->output->id >= g->nnodes || g->nodes[g->output->id] != g->output)) {
    if (err) fprintf(err, "graph invariant violated: output is not a node of the graph\n");
    return false;
  }
  return true;
}
