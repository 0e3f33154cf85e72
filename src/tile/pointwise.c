/*
 * pointwise.c: a graph node's value at one index, as a tile expression.
 *
 * Both lowerings (the naive one in lower.c and the plan lowering in
 * src/search/lower_plan.c) build the expressions of their map and store
 * statements here.  tile_pointwise(p, n, idx) walks down from node n:
 * elementwise ops become SX_OP over their operands' values (each operand
 * indexed through NumPy broadcasting), layout ops (permute, reshape,
 * slice, concatenation) and gathers transform the index and continue, and
 * the walk stops at a node that lives in memory: a global tensor of the
 * program (tp->of_node) is loaded, and a caller's hook may stand in for
 * any node first (the plan lowering answers with a read of the tile that
 * holds the node in the kernel, or with a substitute expression).  Indices
 * that could leave a tensor (the unused side of a concatenation, a
 * gather's data-dependent index) are clamped into range, so every load is
 * in bounds whatever the evaluation order of a target's select.  Every node
 * the walk expands is recorded in the kernel's `covers` (source comments,
 * verify's attribution).
 */
#include <stdlib.h>
#include <string.h>

#include "tile.h"

static SExpr *I(Pw *p, int64_t v) { return sx_int(p->a, v); }
static SExpr *ADD(Pw *p, SExpr *x, SExpr *y) { return sx_idx(p->a, IX_ADD, x, y); }
static SExpr *LT(Pw *p, SExpr *x, SExpr *y) { return sx_idx(p->a, IX_LT, x, y); }

SExpr *tile_clamp_index(Arena *a, SExpr *x, int64_t n) {
  return sx_idx(a, IX_MIN, sx_idx(a, IX_MAX, x, sx_int(a, 0)), sx_int(a, n > 0 ? n - 1 : 0));
}

void tile_unflatten(Arena *a, SExpr *flat, const Shape *s, int r, SExpr **out) {
  int64_t stride = 1;
  for (int d = r - 1; d >= 0; d--) {
    int64_t n = s->d[d].n;
    if (n == 1) out[d] = sx_int(a, 0);
    else {
      SExpr *q = stride == 1 ? flat : sx_idx(a, IX_DIV, flat, sx_int(a, stride));
      out[d] = d == 0 ? q : sx_idx(a, IX_MOD, q, sx_int(a, n));
    }
    stride *= n ? n : 1;
  }
}

void tile_reshape_index(Arena *a, SExpr *const *idx, const Shape *from, const Shape *to, SExpr **out) {
  SExpr *flat = sx_int(a, 0);
  int64_t stride = 1;
  for (int d = from->rank - 1; d >= 0; d--) {
    flat = sx_idx(a, IX_ADD, flat, sx_idx(a, IX_MUL, idx[d], sx_int(a, stride)));
    stride *= from->d[d].n;
  }
  tile_unflatten(a, flat, to, to->rank, out);
}

void tile_broadcast_index(const Shape *op, const Shape *out, SExpr **idx, SExpr **res, Arena *a) {
  int off = out->rank - op->rank;
  for (int d = 0; d < op->rank; d++) res[d] = op->d[d].n == 1 ? sx_int(a, 0) : idx[d + off];
}

static int *cover_slot(const Kernel *k, int id) {
  int i = (int)(((uint32_t)id * 2654435761u) & (uint32_t)(k->cover_cap - 1));
  while (k->cover_ids[i] >= 0 && k->cover_ids[i] != id) i = (i + 1) & (k->cover_cap - 1);
  return &k->cover_ids[i];
}

/* (a set beside the list: the kernels of a deep model's backward cover
   hundreds of nodes, each met thousands of times by the walks) */
void tile_cover(Arena *a, Kernel *k, const Node *n) {
  if (!k) return;
  if (2 * (k->covers.len + 1) > k->cover_cap) {
    int cap = k->cover_cap ? 2 * k->cover_cap : 64;
    k->cover_ids = arena_alloc(a, sizeof(int) * (size_t)cap);
    k->cover_cap = cap;
    for (int i = 0; i < cap; i++) k->cover_ids[i] = -1;
    for (int i = 0; i < k->covers.len; i++) *cover_slot(k, k->covers.data[i]->id) = k->covers.data[i]->id;
  }
  int *slot = cover_slot(k, n->id);
  if (*slot == n->id) return;
  *slot = n->id;
  vec_push(a, &k->covers, n);
}

static SExpr *operand(Pw *p, const Node *n, int k, SExpr **idx) {
  SExpr *sub[TS_MAX_RANK];
  tile_broadcast_index(&n->in[k]->shape, &n->shape, idx, sub, p->a);
  return tile_pointwise(p, n->in[k], sub, false);
}

SExpr *tile_pointwise(Pw *p, const Node *n, SExpr **idx, bool top) {
  if (p->hook) {
    SExpr *h = p->hook(p, n, idx, top);
    if (h) return h;
  }
  TBuf *buf = p->tp->of_node[n->id];
  if (buf && !top && !(p->computed && p->computed[n->id])) return sx_load(p->a, buf, idx, n->shape.rank);
  tile_cover(p->a, p->k, n);
  SExpr *args[3], *sub[TS_MAX_RANK];
  switch (op_info[n->op].cls) {
  case OPC_LEAF:
    if (n->op == OP_INPUT) return sx_load(p->a, buf, idx, n->shape.rank);
    if (n->op == OP_IOTA) return idx[0];
    return n->kind == EK_INT ? sx_int(p->a, (int64_t)n->value) : sx_real(p->a, n->value);
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT:
    for (int k = 0; k < n->nin; k++) args[k] = operand(p, n, k, idx);
    return sx_op(p->a, n->op, n->kind, args, n->nin);
  case OPC_LAYOUT: {
    const Node *x = n->in[0];
    if (n->op == OP_PERMUTE) {
      for (int d = 0; d < n->shape.rank; d++) sub[n->perm[d]] = idx[d];
    } else if (n->op == OP_RESHAPE) {
      tile_reshape_index(p->a, idx, &n->shape, &x->shape, sub);
    } else { /* OP_SLICE */
      memcpy(sub, idx, sizeof(SExpr *) * (size_t)n->shape.rank);
      sub[n->axis] = ADD(p, idx[n->axis], I(p, n->lo));
    }
    return tile_pointwise(p, x, sub, false);
  }
  case OPC_CONCAT: {
    /* select(i < n0, x0[i], select(i < n0 + n1, x1[i - n0], ...)), each
       index clamped into its operand */
    int ax = n->axis;
    int64_t off = 0;
    SExpr *parts[64];
    int np = n->nin < 64 ? n->nin : 64;
    for (int k = 0; k < np; k++) {
      const Node *x = n->in[k];
      memcpy(sub, idx, sizeof(SExpr *) * (size_t)n->shape.rank);
      sub[ax] = tile_clamp_index(p->a, sx_idx(p->a, IX_SUB, idx[ax], I(p, off)), x->shape.d[ax].n);
      parts[k] = tile_pointwise(p, x, sub, false);
      off += x->shape.d[ax].n;
    }
    SExpr *e = parts[np - 1];
    for (int k = np - 2; k >= 0; k--) {
      int64_t end = 0;
      for (int m = 0; m <= k; m++) end += n->in[m]->shape.d[ax].n;
      args[0] = LT(p, idx[ax], I(p, end));
      args[1] = parts[k];
      args[2] = e;
      e = sx_op(p->a, OP_SELECT, n->kind, args, 3);
    }
    return e;
  }
  case OPC_GATHER: {
    const Node *x = n->in[0], *ix = n->in[1];
    SExpr *isub[TS_MAX_RANK];
    tile_broadcast_index(&ix->shape, &n->shape, idx, isub, p->a);
    SExpr *where = tile_pointwise(p, ix, isub, false);
    /* x's index: the result index broadcast to x, the gathered axis replaced */
    Shape xs = x->shape;
    for (int d = 0; d < xs.rank; d++) sub[d] = xs.d[d].n == 1 ? I(p, 0) : idx[d];
    sub[n->axis] = tile_clamp_index(p->a, where, xs.d[n->axis].n);
    return tile_pointwise(p, x, sub, false);
  }
  case OPC_REDUCE:
  case OPC_MATMUL: break;
  }
  /* reductions and products live in memory or in a tile: the caller did not
     provide this one (a lowering bug, reported by the caller) */
  p->failed = n;
  return sx_real(p->a, 0);
}
