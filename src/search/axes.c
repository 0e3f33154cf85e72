/*
 * axes.c: a kernel's members and logical axes.
 *
 * Members.  A kernel stores its outputs; it computes every node between
 * them and what lives in memory (inputs, other kernels' outputs) that no
 * other kernel stores.  Layout ops and gathers whose operands all live in
 * memory are not members: the load of the tensor under them reads through
 * them in place (pointwise.c), as the naive lowering always has.
 *
 * Axes.  Every dimension of size above 1 of a member is a slot, and every
 * reduction or product has one more slot for the axis it reduces over.
 * Union-find joins slots that must run in step: an elementwise op with its
 * member operands (NumPy broadcasting: a dimension of size 1 joins
 * nothing, the operand is constant along that axis), a reduction with its
 * operand's kept dimensions and its reduced dimension, a product's rows
 * with its left operand's, its columns with its right operand's, and both
 * operands' contracted dimensions with its reduced slot; a permute joins
 * dimensions through its permutation; a reshape between members may only
 * insert or remove dimensions of size 1.  Each class is an axis.  A node
 * with two dimensions on one axis (a diagonal) cannot be tiled, nor can a
 * slot class whose sizes disagree.  An operand in memory read by one
 * member takes part in no union: it is indexed from its reader's axes.  One
 * read by two or more members is "loaded": it gets slots like a member (a
 * leaf: nothing below it joins), so its readers meet on its axes (a row's
 * sum of squares and its scaled copy run along one axis), and the lowering
 * holds it in a tile read once.
 */
#include <string.h>

#include "plan.h"

const char *axis_role_name(AxisRole r) {
  switch (r) {
  case AX_GRID: return "grid";
  case AX_STREAM: return "stream";
  case AX_WHOLE: return "whole";
  case AX_INNER: return "inner";
  }
  return "?";
}

static bool is_leaf(const Node *n) { return op_info[n->op].cls == OPC_LEAF; }

static bool is_layout(const Node *n) {
  OpClass c = op_info[n->op].cls;
  return c == OPC_LAYOUT || c == OPC_CONCAT || c == OPC_GATHER;
}

/* Do a reshape's dimensions pair with its operand's in order (only
   dimensions of size 1 come and go)?  Then it joins the kernel's axes;
   otherwise it splits or merges dimensions. */
static bool reshape_pairs(const Node *n) {
  int to_of[TS_MAX_RANK];
  return shape_reshape_map(&n->in[0]->shape, &n->shape, to_of);
}

/* An output that is a reshape splitting or merging dimensions of a node
   computed here (the heads of a grouped attention merged back) is stored
   as that node, through the reshape: its global holds the same bytes in
   row-major order, so no kernel of its own copies it. */
static void store_through_views(Plan *p, PKernel *k) {
  Arena *a = p->g->ctx->arena;
  while (k->views.len < k->outs.len) vec_push(a, &k->views, NULL);
  for (int i = 0; i < k->outs.len; i++) {
    const Node *o = k->outs.data[i], *x = o->in[0];
    if (k->views.data[i] || o->op != OP_RESHAPE || reshape_pairs(o)) continue;
    if (is_leaf(x) || is_layout(x) || p->kernel_of[x->id] >= 0) continue;
    bool dup = false;
    for (int j = 0; j < k->outs.len; j++) dup |= k->outs.data[j] == x;
    if (dup) continue;
    k->views.data[i] = o;
    k->outs.data[i] = x;
    if (k->root == o) k->root = x;
  }
}

/* Mark the members of k: walk down from its outputs (seen: stamped per
   output walk; member: stamped once per kernel). */
static void collect(Plan *p, PKernel *k, const Node *n, bool top, int seen, int member) {
  struct PlanMarks *m = p->marks;
  if (m->seen_at[n->id] == seen) return;
  m->seen_at[n->id] = seen;
  if (is_leaf(n)) return;
  if (!top && p->kernel_of[n->id] >= 0) return; /* another kernel stores it: read from memory */
  for (int i = 0; i < n->nin; i++) collect(p, k, n->in[i], false, seen, member);
  /* a layout op over nothing computed here is read in place */
  if (is_layout(n) && !top) {
    bool any = false;
    for (int i = 0; i < n->nin; i++) any |= m->member_at[n->in[i]->id] == member;
    if (!any) return;
  }
  if (m->member_at[n->id] != member) vec_push(p->g->ctx->arena, &k->members, n);
  m->member_at[n->id] = member;
}

void plan_members(Plan *p, PKernel *k) {
  store_through_views(p, k);
  int member = plan_stamps(p, k->outs.len + 1);
  k->members.len = 0;
  for (int i = 0; i < k->outs.len; i++) collect(p, k, k->outs.data[i], true, member + 1 + i, member);
  plan_sort_nodes(&k->members);
}

static int uf_find(int *par, int x) {
  while (par[x] != x) x = par[x] = par[par[x]];
  return x;
}

static void uf_join(int *par, int a, int b) {
  a = uf_find(par, a), b = uf_find(par, b);
  if (a != b) par[a > b ? a : b] = a < b ? a : b;
}

static bool fail(PKernel *k, const char *why, const Node *n) {
  snprintf(k->why, sizeof k->why, "%s (%%%d %s)", why, n ? n->id : -1, n ? op_info[n->op].name : "");
  return false;
}

bool plan_axes(Plan *p, PKernel *k) {
  Graph *g = p->g;
  Arena *a = g->ctx->arena;
  int nn = g->nnodes;
  if (!k->member) k->member = arena_alloc(a, sizeof(bool) * (size_t)nn);
  if (!k->loaded) k->loaded = arena_alloc(a, sizeof(bool) * (size_t)nn);
  memset(k->loaded, 0, sizeof(bool) * (size_t)nn);
  if (!k->dimax) k->dimax = arena_alloc(a, sizeof *k->dimax * (size_t)nn);
  if (!k->redax) k->redax = arena_alloc(a, sizeof(int8_t) * (size_t)nn);
  memset(k->member, 0, sizeof(bool) * (size_t)nn);
  plan_members(p, k);
  for (int i = 0; i < k->members.len; i++) k->member[k->members.data[i]->id] = true;
  if (!k->member[k->root->id]) return fail(k, "an output that is a leaf is stored by the naive lowering", k->root);
  /* tensors in memory that two or more members read (not scalars, not index
     arithmetic) */
  int *readers = p->marks->count_at;
  k->axnodes.len = 0;
  for (int i = 0; i < k->members.len; i++) vec_push(a, &k->axnodes, k->members.data[i]);
  /* counted; then each read twice or more marked loaded and listed once;
     then the counts zeroed again for the next call */
  for (int pass = 0; pass < 3; pass++)
    for (int i = 0; i < k->members.len; i++) {
      const Node *n = k->members.data[i];
      for (int o = 0; o < n->nin; o++) {
        const Node *x = n->in[o];
        if (k->member[x->id] || x->shape.rank == 0 || x->kind != EK_REAL || x->op == OP_CONST) continue;
        bool dup = false;
        for (int q = 0; q < o; q++) dup |= n->in[q] == x;
        if (dup) continue;
        if (pass == 0) {
          readers[x->id]++;
        } else if (pass == 1 && readers[x->id] >= 2 && !k->loaded[x->id]) {
          k->loaded[x->id] = true;
          vec_push(a, &k->axnodes, x);
        } else if (pass == 2) {
          readers[x->id] = 0;
        }
      }
    }
  plan_sort_nodes(&k->axnodes);
  NodeList nodes = k->axnodes;
  /* slots: (TS_MAX_RANK + 1) per member: its dimensions, then its reduced axis */
  int S = TS_MAX_RANK + 1;
  int *slot_of = p->marks->slot_at;
  int nslots = 0;
  for (int i = 0; i < nodes.len; i++) slot_of[nodes.data[i]->id] = nslots++ * S;
  int *par = arena_alloc(a, sizeof(int) * (size_t)(nslots * S + 1));
  for (int i = 0; i < nslots * S; i++) par[i] = i;
#define SLOT(n, d) (slot_of[(n)->id] + (d))
#define RED(n) (slot_of[(n)->id] + TS_MAX_RANK)
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    int r = n->shape.rank;
    switch (op_info[n->op].cls) {
    case OPC_LEAF: break;
    case OPC_UNARY:
    case OPC_BINARY:
    case OPC_COMPARE:
    case OPC_SELECT:
      for (int o = 0; o < n->nin; o++) {
        const Node *x = n->in[o];
        if (!pk_has_axes(k, x)) continue;
        int off = r - x->shape.rank;
        for (int d = 0; d < x->shape.rank; d++)
          if (x->shape.d[d].n > 1 && x->shape.d[d].n == n->shape.d[d + off].n) uf_join(par, SLOT(x, d), SLOT(n, d + off));
      }
      break;
    case OPC_REDUCE: {
      const Node *x = n->in[0];
      if (!pk_has_axes(k, x)) break;
      for (int d = 0; d < r; d++)
        if (d != n->axis && x->shape.d[d].n > 1) uf_join(par, SLOT(x, d), SLOT(n, d));
      uf_join(par, SLOT(x, n->axis), RED(n));
      break;
    }
    case OPC_MATMUL:
      for (int o = 0; o < 2; o++) {
        const Node *x = n->in[o];
        if (!pk_has_axes(k, x)) continue;
        int xr = x->shape.rank, off = r - xr;
        for (int d = 0; d < xr - 2; d++)
          if (x->shape.d[d].n > 1 && x->shape.d[d].n == n->shape.d[d + off].n) uf_join(par, SLOT(x, d), SLOT(n, d + off));
        if (o == 0) {
          if (x->shape.d[xr - 2].n > 1) uf_join(par, SLOT(x, xr - 2), SLOT(n, r - 2));
          uf_join(par, SLOT(x, xr - 1), RED(n));
        } else {
          if (x->shape.d[xr - 1].n > 1) uf_join(par, SLOT(x, xr - 1), SLOT(n, r - 1));
          uf_join(par, SLOT(x, xr - 2), RED(n));
        }
      }
      break;
    case OPC_LAYOUT: {
      const Node *x = n->in[0];
      if (!pk_has_axes(k, x)) break; /* a stored view of a tensor in memory: read through it */
      if (n->op == OP_PERMUTE) {
        for (int d = 0; d < r; d++)
          if (n->shape.d[d].n > 1) uf_join(par, SLOT(x, n->perm[d]), SLOT(n, d));
      } else if (n->op == OP_RESHAPE) {
        /* only dimensions of size 1 may come and go: pair the others in order */
        int to_of[TS_MAX_RANK];
        if (!shape_reshape_map(&x->shape, &n->shape, to_of))
          return fail(k, "a reshape between fused nodes that splits or merges dimensions", n);
        for (int d = 0; d < x->shape.rank; d++)
          if (to_of[d] >= 0) uf_join(par, SLOT(x, d), SLOT(n, to_of[d]));
      } else {
        return fail(k, "a slice of a fused node", n);
      }
      break;
    }
    case OPC_CONCAT:
    case OPC_GATHER: return fail(k, "a concatenation or gather of a fused node", n);
    }
  }
  /* classes become axes, numbered in order of first appearance */
  int *axis_of = arena_alloc(a, sizeof(int) * (size_t)(nslots * S + 1));
  for (int i = 0; i < nslots * S; i++) axis_of[i] = -1;
  k->naxes = 0;
  for (int i = 0; i < nodes.len; i++) {
    const Node *n = nodes.data[i];
    bool has_red = k->member[n->id] && (op_info[n->op].cls == OPC_REDUCE || op_info[n->op].cls == OPC_MATMUL);
    int64_t redsize = 0;
    if (op_info[n->op].cls == OPC_REDUCE) redsize = n->in[0]->shape.d[n->axis].n;
    else if (op_info[n->op].cls == OPC_MATMUL) redsize = n->in[0]->shape.d[n->in[0]->shape.rank - 1].n;
    for (int d = 0; d <= TS_MAX_RANK; d++) {
      bool is_red = d == TS_MAX_RANK;
      if (is_red ? !has_red : d >= n->shape.rank) continue;
      int64_t size = is_red ? redsize : n->shape.d[d].n;
      if (!is_red && size <= 1) {
        k->dimax[n->id][d] = -1;
        continue;
      }
      int root = uf_find(par, slot_of[n->id] + d);
      if (axis_of[root] < 0) {
        if (k->naxes >= PLAN_MAX_AXES) return fail(k, "more axes than a kernel can hold", n);
        axis_of[root] = k->naxes;
        k->axrep[k->naxes].node = n->id;
        k->axrep[k->naxes].dim = (int8_t)d;
        PAxis *ax = &k->ax[k->naxes++];
        memset(ax, 0, sizeof *ax);
        ax->size = size;
        ax->sym = is_red ? NULL : n->shape.d[d].sym;
        ax->role = AX_GRID;
        ax->tile = 1;
        ax->splits = 1;
      }
      int ai = axis_of[root];
      if (k->ax[ai].size != size) return fail(k, "dimensions of different sizes meet on one axis", n);
      if (!k->ax[ai].sym && !is_red) k->ax[ai].sym = n->shape.d[d].sym;
      if (is_red) {
        k->redax[n->id] = (int8_t)ai;
        k->ax[ai].reduced = true;
      } else {
        k->dimax[n->id][d] = (int8_t)ai;
      }
    }
    for (int d = n->shape.rank; d < TS_MAX_RANK; d++) k->dimax[n->id][d] = -1;
    if (!has_red) k->redax[n->id] = -1;
    /* a diagonal: two dimensions of one node on one axis, or a reduction
       over an axis its result also runs along (a residual add joins a
       product's columns to its contraction: the layer must be stored) */
    for (int d = 0; d < n->shape.rank; d++) {
      if (k->dimax[n->id][d] >= 0 && has_red && k->dimax[n->id][d] == k->redax[n->id])
        return fail(k, "a reduction over an axis its result runs along", n);
      for (int e = d + 1; e < n->shape.rank; e++)
        if (k->dimax[n->id][d] >= 0 && k->dimax[n->id][d] == k->dimax[n->id][e])
          return fail(k, "two dimensions of one node run along one axis", n);
    }
  }
#undef SLOT
#undef RED
  for (int i = 0; i < k->outs.len; i++) {
    const Node *o = k->outs.data[i];
    for (int d = 0; d < o->shape.rank; d++)
      if (k->dimax[o->id][d] >= 0) k->ax[k->dimax[o->id][d]].in_output = true;
  }
  for (int ai = 0; ai < k->naxes; ai++) {
    PAxis *ax = &k->ax[ai];
    if (ax->reduced && !ax->in_output) {
      ax->role = AX_WHOLE;
      ax->tile = ax->size;
    }
  }
  k->stream = -1;
  k->nmerge = 0;
  return true;
}

int plan_axis_of_slot(const PKernel *k, int node, int dim) {
  if (node < 0 || !(k->member[node] || k->loaded[node])) return -1;
  return dim == TS_MAX_RANK ? k->redax[node] : k->dimax[node][dim];
}

void plan_merge_axes(PKernel *k, int a, int b) {
  if (k->nmerge < PLAN_MAX_AXES) {
    k->merge[k->nmerge][0].node = k->axrep[a].node, k->merge[k->nmerge][0].dim = k->axrep[a].dim;
    k->merge[k->nmerge][1].node = k->axrep[b].node, k->merge[k->nmerge][1].dim = k->axrep[b].dim;
    k->nmerge++;
  }
  for (int i = 0; i < k->axnodes.len; i++) {
    const Node *n = k->axnodes.data[i];
    for (int d = 0; d < TS_MAX_RANK; d++)
      if (k->dimax[n->id][d] == b) k->dimax[n->id][d] = (int8_t)a;
      else if (k->dimax[n->id][d] > b) k->dimax[n->id][d]--;
    if (k->redax[n->id] == b) k->redax[n->id] = (int8_t)a;
    else if (k->redax[n->id] > b) k->redax[n->id]--;
  }
  k->ax[a].reduced |= k->ax[b].reduced;
  k->ax[a].in_output |= k->ax[b].in_output;
  for (int i = b; i + 1 < k->naxes; i++) k->ax[i] = k->ax[i + 1], k->axrep[i] = k->axrep[i + 1];
  k->naxes--;
}
