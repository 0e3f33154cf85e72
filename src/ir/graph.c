/*
 * graph.c: building the graph IR.
 *
 * Every op is built through one of the ir_* builders below, which know the
 * op's shape rule (NumPy broadcasting for elementwise ops, keep-dimension
 * reductions, batch-broadcast matrix products, ...), check element kinds,
 * and report a violation as a user error at the operator's position with
 * both shapes.  A built node is then hash-consed: its op, kind, shape,
 * attributes and operands are hashed, and an equal node already in the graph
 * is returned instead, so equal subterms are shared.
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

Graph *graph_new(Ctx *c) {
  Graph *g = arena_alloc(c->arena, sizeof *g);
  g->ctx = c;
  g->nbuckets = 1024;
  g->buckets = arena_alloc(c->arena, sizeof(Node *) * (size_t)g->nbuckets);
  return g;
}

/* ---- shapes ---- */

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

/* ---- hash-consing ---- */

static uint64_t node_hash(const Node *n) {
  uint64_t h = hash_mix((uint64_t)n->op * 31 + (uint64_t)n->kind, (uint64_t)n->shape.rank);
  for (int i = 0; i < n->shape.rank; i++) h = hash_mix(h, (uint64_t)n->shape.d[i].n);
  for (int i = 0; i < n->nin; i++) h = hash_mix(h, (uint64_t)n->in[i]->id);
  uint64_t bits;
  memcpy(&bits, &n->value, sizeof bits);
  h = hash_mix(h, bits);
  h = hash_mix(h, (uint64_t)n->axis);
  h = hash_mix(h, (uint64_t)n->lo);
  h = hash_mix(h, (uint64_t)n->hi);
  for (int i = 0; i < n->shape.rank; i++) h = hash_mix(h, (uint64_t)n->perm[i]);
  return h;
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

static const char *kind_name(ElemKind k) {
  switch (k) {
  case EK_REAL: return "real";
  case EK_INT: return "integer";
  case EK_BOOL: return "boolean";
  }
  return "?";
}

/* ---- leaves ---- */

static void check_shape_size(Graph *g, const Shape *s, Pos p) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->d[i].n;
    if (d < 0) ts_error(g->ctx, p, "dimension %d has negative size %lld", i, (long long)d);
    if (d > 0 && n > INT64_MAX / d)
      ts_error(g->ctx, p, "the tensor has more than 2^63 elements");
    n *= d;
  }
}

Node *ir_input(Graph *g, const char *name, InputRole role, const Shape *s, Pos p) {
  check_shape_size(g, s, p);
  Node n = proto_of(OP_INPUT, role == ROLE_INDEX ? EK_INT : EK_REAL, s, 0, p);
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
  Node n = proto_of(OP_CONST, EK_REAL, NULL, 0, p);
  n.value = v;
  return intern(g, &n, NULL);
}

Node *ir_const_int(Graph *g, int64_t v, Pos p) {
  Node n = proto_of(OP_CONST, EK_INT, NULL, 0, p);
  n.value = (double)v;
  return intern(g, &n, NULL);
}

Node *ir_iota(Graph *g, int64_t len, const char *sym, Pos p) {
  if (len < 0) ts_error(g->ctx, p, "iota needs a size of at least 0, not %lld", (long long)len);
  Shape s = {.rank = 1, .d = {{len, sym}}};
  Node n = proto_of(OP_IOTA, EK_INT, &s, 0, p);
  return intern(g, &n, NULL);
}

/* ---- elementwise ---- */

Node *ir_unary(Graph *g, Op op, Node *a, Pos p) {
  ElemKind k = EK_REAL;
  if (op == OP_CAST) {
    if (a->kind == EK_REAL) return a; /* cast of a real tensor is the tensor */
  } else if (a->kind == EK_BOOL) {
    ts_error(g->ctx, p, "'%s' needs a numeric tensor, not a boolean mask; use 'cast' or 'select'",
             op_info[op].name);
  } else if (op == OP_NEG || op == OP_ABS) {
    k = a->kind;
  }
  Node n = proto_of(op, k, &a->shape, 1, p);
  return intern(g, &n, &a);
}

static void broadcast_or_error(Graph *g, const char *what, Node *a, Node *b, Shape *out, Pos p) {
  int bad;
  if (shape_broadcast(&a->shape, &b->shape, out, &bad)) return;
  char sa[256], sb[256];
  const Dim *da = &a->shape.d[a->shape.rank - 1 - bad], *db = &b->shape.d[b->shape.rank - 1 - bad];
  ts_error(g->ctx, p,
           "cannot broadcast %s %s with %s: dimension %d from the end is %lld on the left and %lld on "
           "the right",
           what, shape_str(&a->shape, sa, sizeof sa), shape_str(&b->shape, sb, sizeof sb), bad + 1,
           (long long)da->n, (long long)db->n);
}

Node *ir_binary(Graph *g, Op op, Node *a, Node *b, Pos p) {
  Shape s;
  broadcast_or_error(g, "the shapes", a, b, &s, p);
  ElemKind k;
  if (op_info[op].cls == OPC_COMPARE) {
    if ((a->kind == EK_BOOL) != (b->kind == EK_BOOL) && op != OP_EQ && op != OP_NE)
      ts_error(g->ctx, p, "cannot compare a %s tensor with a %s tensor", kind_name(a->kind),
               kind_name(b->kind));
    k = EK_BOOL;
  } else {
    if (a->kind == EK_BOOL || b->kind == EK_BOOL)
      ts_error(g->ctx, p,
               "'%s' needs numeric operands, but one is a boolean mask; use 'cast' or 'select'",
               op_info[op].name);
    bool ints = a->kind == EK_INT && b->kind == EK_INT;
    k = ints && op != OP_DIV && op != OP_POW ? EK_INT : EK_REAL;
    if (a->kind != b->kind) {
      /* an Index mixed with a real tensor: promote explicitly */
      if (a->kind == EK_INT) a = ir_unary(g, OP_CAST, a, p);
      if (b->kind == EK_INT) b = ir_unary(g, OP_CAST, b, p);
    }
  }
  Node n = proto_of(op, k, &s, 2, p);
  Node *ins[2] = {a, b};
  return intern(g, &n, ins);
}

Node *ir_select(Graph *g, Node *c, Node *a, Node *b, Pos p) {
  if (c->kind != EK_BOOL)
    ts_error(g->ctx, p, "the condition of 'select' must be a boolean mask (a comparison), not a %s tensor",
             kind_name(c->kind));
  if (a->kind == EK_BOOL || b->kind == EK_BOOL)
    ts_error(g->ctx, p, "the branches of 'select' must be numeric tensors");
  Shape s1, s;
  broadcast_or_error(g, "the branches", a, b, &s1, p);
  Node tmp = {.shape = s1};
  broadcast_or_error(g, "the condition", c, &tmp, &s, p);
  if (a->kind != b->kind) {
    if (a->kind == EK_INT) a = ir_unary(g, OP_CAST, a, p);
    if (b->kind == EK_INT) b = ir_unary(g, OP_CAST, b, p);
  }
  Node n = proto_of(OP_SELECT, a->kind, &s, 3, p);
  Node *ins[3] = {c, a, b};
  return intern(g, &n, ins);
}

/* Normalise a possibly negative axis against rank r, or report an error. */
static int norm_axis(Graph *g, int axis, int r, const char *what, Pos p) {
  int a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    ts_error(g->ctx, p, "%s: dim %d is out of range for a tensor of rank %d (valid: %d..%d)", what,
             axis, r, -r, r - 1);
  return a;
}

Node *ir_reduce(Graph *g, Op op, Node *a, int axis, Pos p) {
  if (a->shape.rank == 0) ts_error(g->ctx, p, "'%s' needs a tensor of rank at least 1, not a scalar", op_info[op].name);
  if (a->kind == EK_BOOL) ts_error(g->ctx, p, "'%s' needs a numeric tensor, not a boolean mask", op_info[op].name);
  int ax = norm_axis(g, axis, a->shape.rank, op_info[op].name, p);
  if (a->shape.d[ax].n == 0 && op != OP_SUM)
    ts_error(g->ctx, p, "'%s' over an empty dimension has no value", op_info[op].name);
  Shape s = a->shape;
  s.d[ax] = (Dim){1, NULL};
  Node n = proto_of(op, a->kind, &s, 1, p);
  n.axis = ax;
  return intern(g, &n, &a);
}

Node *ir_matmul(Graph *g, Node *a, Node *b, Pos p) {
  char sa[256], sb[256];
  if (a->shape.rank < 2 || b->shape.rank < 2)
    ts_error(g->ctx, p, "'⬝' needs operands of rank at least 2, got %s and %s",
             shape_str(&a->shape, sa, sizeof sa), shape_str(&b->shape, sb, sizeof sb));
  if (a->kind == EK_BOOL || b->kind == EK_BOOL)
    ts_error(g->ctx, p, "'⬝' needs numeric operands, not boolean masks");
  const Dim *k1 = &a->shape.d[a->shape.rank - 1], *k2 = &b->shape.d[b->shape.rank - 2];
  if (k1->n != k2->n)
    ts_error(g->ctx, p,
             "'⬝' contracts the last dimension of the left operand with the second-to-last of the "
             "right: %s ⬝ %s has %lld against %lld",
             shape_str(&a->shape, sa, sizeof sa), shape_str(&b->shape, sb, sizeof sb),
             (long long)k1->n, (long long)k2->n);
  Shape ba = a->shape, bb = b->shape, s;
  ba.rank -= 2;
  bb.rank -= 2;
  int bad;
  if (!shape_broadcast(&ba, &bb, &s, &bad))
    ts_error(g->ctx, p, "the batch dimensions of %s ⬝ %s do not broadcast",
             shape_str(&a->shape, sa, sizeof sa), shape_str(&b->shape, sb, sizeof sb));
  if (s.rank + 2 > TS_MAX_RANK) ts_error(g->ctx, p, "the result has rank above %d", TS_MAX_RANK);
  s.d[s.rank] = a->shape.d[a->shape.rank - 2];
  s.d[s.rank + 1] = b->shape.d[b->shape.rank - 1];
  s.rank += 2;
  if (a->kind != b->kind || a->kind == EK_INT) {
    if (a->kind == EK_INT) a = ir_unary(g, OP_CAST, a, p);
    if (b->kind == EK_INT) b = ir_unary(g, OP_CAST, b, p);
  }
  Node n = proto_of(OP_MATMUL, EK_REAL, &s, 2, p);
  Node *ins[2] = {a, b};
  return intern(g, &n, ins);
}

/* ---- data movement ---- */

Node *ir_permute(Graph *g, Node *a, const int *perm, int np, Pos p) {
  int r = a->shape.rank;
  if (np != r)
    ts_error(g->ctx, p, "'permute' of a rank-%d tensor needs %d entries, not %d", r, r, np);
  bool seen[TS_MAX_RANK] = {0};
  Shape s = {.rank = r};
  bool identity = true;
  for (int i = 0; i < r; i++) {
    if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
      ts_error(g->ctx, p, "'permute' needs a permutation of 0..%d; entry %d is %d", r - 1, i, perm[i]);
    seen[perm[i]] = true;
    s.d[i] = a->shape.d[perm[i]];
    identity &= perm[i] == i;
  }
  if (identity) return a;
  /* a permute of a permute is one permute */
  if (a->op == OP_PERMUTE) {
    int comp[TS_MAX_RANK];
    for (int i = 0; i < r; i++) comp[i] = a->perm[perm[i]];
    return ir_permute(g, a->in[0], comp, r, p);
  }
  Node n = proto_of(OP_PERMUTE, a->kind, &s, 1, p);
  memcpy(n.perm, perm, sizeof(int) * (size_t)r);
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
  check_shape_size(g, s, p);
  if (shape_numel(s) != shape_numel(&a->shape)) {
    char sa[256], sb[256];
    ts_error(g->ctx, p, "cannot reshape %s (%lld elements) to %s (%lld elements)",
             shape_str(&a->shape, sa, sizeof sa), (long long)shape_numel(&a->shape),
             shape_str(s, sb, sizeof sb), (long long)shape_numel(s));
  }
  if (a->op == OP_RESHAPE) a = a->in[0];
  if (shape_equal(&a->shape, s)) {
    bool same_syms = true;
    for (int i = 0; i < s->rank; i++) same_syms &= sym_equal(a->shape.d[i].sym, s->d[i].sym);
    if (same_syms) return a;
  }
  Node n = proto_of(OP_RESHAPE, a->kind, s, 1, p);
  return intern(g, &n, &a);
}

Node *ir_slice(Graph *g, Node *a, int axis, int64_t lo, int64_t hi, Pos p) {
  if (a->shape.rank == 0) ts_error(g->ctx, p, "'slice' needs a tensor of rank at least 1");
  int ax = norm_axis(g, axis, a->shape.rank, "slice", p);
  int64_t n = a->shape.d[ax].n;
  if (lo < 0 || hi < lo || hi > n)
    ts_error(g->ctx, p, "slice [%lld, %lld) is out of range for dimension %d of size %lld "
             "(need 0 <= lo <= hi <= %lld)", (long long)lo, (long long)hi, ax, (long long)n, (long long)n);
  if (lo == 0 && hi == n) return a;
  Shape s = a->shape;
  s.d[ax] = (Dim){hi - lo, NULL};
  Node nd = proto_of(OP_SLICE, a->kind, &s, 1, p);
  nd.axis = ax;
  nd.lo = lo;
  nd.hi = hi;
  return intern(g, &nd, &a);
}

Node *ir_concat(Graph *g, Node **xs, int n, int axis, Pos p) {
  if (n == 0) ts_error(g->ctx, p, "'concat' needs at least one tensor");
  if (n == 1) return xs[0];
  const Shape *s0 = &xs[0]->shape;
  if (s0->rank == 0) ts_error(g->ctx, p, "'concat' needs tensors of rank at least 1");
  int ax = norm_axis(g, axis, s0->rank, "concat", p);
  Shape s = *s0;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    const Shape *si = &xs[i]->shape;
    bool ok = si->rank == s0->rank && xs[i]->kind == xs[0]->kind;
    for (int d = 0; ok && d < s0->rank; d++) ok = d == ax || si->d[d].n == s0->d[d].n;
    if (!ok) {
      char a[256], b[256];
      ts_error(g->ctx, p, "'concat' along dim %d: tensor %d has shape %s, which does not match %s "
               "(or its element kind differs)", ax, i, shape_str(si, b, sizeof b), shape_str(s0, a, sizeof a));
    }
    total += si->d[ax].n;
  }
  s.d[ax] = (Dim){total, NULL};
  Node nd = proto_of(OP_CONCAT, xs[0]->kind, &s, n, p);
  nd.axis = ax;
  return intern(g, &nd, xs);
}

Node *ir_gather(Graph *g, Node *x, Node *idx, int axis, Pos p) {
  char sa[256], sb[256];
  if (idx->kind != EK_INT)
    ts_error(g->ctx, p, "the indices of 'gather' must be an Index tensor, not a %s tensor", kind_name(idx->kind));
  if (x->shape.rank == 0 || x->shape.rank != idx->shape.rank)
    ts_error(g->ctx, p, "'gather' needs the tensor and the indices to have the same rank (at least 1): "
             "%s and %s; reshape the indices", shape_str(&x->shape, sa, sizeof sa),
             shape_str(&idx->shape, sb, sizeof sb));
  int ax = norm_axis(g, axis, x->shape.rank, "gather", p);
  Shape a = x->shape, b = idx->shape, s;
  a.d[ax] = b.d[ax] = (Dim){1, NULL};
  int bad;
  if (!shape_broadcast(&a, &b, &s, &bad))
    ts_error(g->ctx, p, "'gather': the dimensions other than %d of %s and %s do not broadcast", ax,
             shape_str(&x->shape, sa, sizeof sa), shape_str(&idx->shape, sb, sizeof sb));
  s.d[ax] = idx->shape.d[ax];
  if (x->shape.d[ax].n == 0 && idx->shape.d[ax].n > 0)
    ts_error(g->ctx, p, "'gather' from an empty dimension");
  Node n = proto_of(OP_GATHER, x->kind, &s, 2, p);
  n.axis = ax;
  Node *ins[2] = {x, idx};
  return intern(g, &n, ins);
}

/* ---- invariants ---- */

static bool fail(FILE *err, const Node *n, const char *what) {
  if (err) fprintf(err, "graph invariant violated at %%%d (%s): %s\n", n->id, op_info[n->op].name, what);
  return false;
}

/* Recompute the shape a node's op gives its operands, independent of the
   builders' fast paths, and compare. */
static bool check_node(const Graph *g, const Node *n, FILE *err) {
  const OpInfo *oi = &op_info[n->op];
  if (oi->arity >= 0 && n->nin != oi->arity) return fail(err, n, "wrong number of operands");
  for (int i = 0; i < n->nin; i++)
    if (!n->in[i] || n->in[i]->id >= n->id || g->nodes[n->in[i]->id] != n->in[i])
      return fail(err, n, "operand not earlier in the graph");
  if (n->shape.rank < 0 || n->shape.rank > TS_MAX_RANK) return fail(err, n, "bad rank");
  Shape s;
  switch (oi->cls) {
  case OPC_LEAF:
    if (n->op == OP_CONST && n->shape.rank != 0) return fail(err, n, "const is not a scalar");
    if (n->op == OP_IOTA && n->shape.rank != 1) return fail(err, n, "iota is not rank 1");
    if (n->op == OP_INPUT && (n->input_index >= g->ninputs || g->inputs[n->input_index] != n))
      return fail(err, n, "input not in the input list");
    return true;
  case OPC_UNARY:
    return shape_equal(&n->shape, &n->in[0]->shape) || fail(err, n, "shape differs from operand");
  case OPC_BINARY:
  case OPC_COMPARE:
    if (!shape_broadcast(&n->in[0]->shape, &n->in[1]->shape, &s, NULL) || !shape_equal(&s, &n->shape))
      return fail(err, n, "shape is not the broadcast of the operands");
    return true;
  case OPC_SELECT: {
    Shape t;
    if (!shape_broadcast(&n->in[1]->shape, &n->in[2]->shape, &t, NULL) ||
        !shape_broadcast(&n->in[0]->shape, &t, &s, NULL) || !shape_equal(&s, &n->shape))
      return fail(err, n, "shape is not the broadcast of the operands");
    return n->in[0]->kind == EK_BOOL || fail(err, n, "condition is not boolean");
  }
  case OPC_REDUCE:
    s = n->in[0]->shape;
    if (n->axis < 0 || n->axis >= s.rank) return fail(err, n, "axis out of range");
    s.d[n->axis].n = 1;
    return shape_equal(&s, &n->shape) || fail(err, n, "shape is not the operand's with the axis kept as 1");
  case OPC_MATMUL: {
    const Shape *a = &n->in[0]->shape, *b = &n->in[1]->shape;
    if (a->rank < 2 || b->rank < 2 || a->d[a->rank - 1].n != b->d[b->rank - 2].n)
      return fail(err, n, "contracted dimensions differ");
    return (n->shape.d[n->shape.rank - 2].n == a->d[a->rank - 2].n &&
            n->shape.d[n->shape.rank - 1].n == b->d[b->rank - 1].n) ||
           fail(err, n, "result dimensions wrong");
  }
  case OPC_LAYOUT:
    if (n->op == OP_RESHAPE)
      return shape_numel(&n->shape) == shape_numel(&n->in[0]->shape) || fail(err, n, "element count changes");
    if (n->op == OP_SLICE)
      return (n->lo >= 0 && n->lo <= n->hi && n->hi <= n->in[0]->shape.d[n->axis].n &&
              n->shape.d[n->axis].n == n->hi - n->lo) || fail(err, n, "slice bounds");
    for (int i = 0; i < n->shape.rank; i++)
      if (n->perm[i] < 0 || n->perm[i] >= n->shape.rank ||
          n->shape.d[i].n != n->in[0]->shape.d[n->perm[i]].n)
        return fail(err, n, "permuted shape wrong");
    return true;
  case OPC_CONCAT: {
    int64_t t = 0;
    for (int i = 0; i < n->nin; i++) t += n->in[i]->shape.d[n->axis].n;
    return t == n->shape.d[n->axis].n || fail(err, n, "concatenated size wrong");
  }
  case OPC_GATHER:
    return (n->in[1]->kind == EK_INT && n->shape.d[n->axis].n == n->in[1]->shape.d[n->axis].n) ||
           fail(err, n, "gather shape or index kind wrong");
  }
  return fail(err, n, "unknown op class");
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
