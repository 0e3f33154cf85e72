/*
 * plan.c: building plans and describing them.
 *
 * plan_naive is the naive lowering as a plan: every node the naive
 * lowering materializes (reductions, products, the output, nodes with
 * several users) is stored by a kernel of its own, lowered by lower.c's
 * rules; tile_lower_plan(plan_naive(g)) is tile_lower(g) byte for byte.
 * plan_kernel_new makes a fused kernel for a set of stored nodes; the
 * search (search.c) edits plans by moving stored nodes between kernels.
 */
#include <stdio.h>
#include <string.h>

#include "plan.h"

Plan *plan_new(Graph *g, DType dt) {
  Arena *a = g->ctx->arena;
  Plan *p = arena_alloc(a, sizeof *p);
  p->g = g;
  p->dtype = dt;
  p->kernel_of = arena_alloc(a, sizeof(int) * (size_t)(g->nnodes ? g->nnodes : 1));
  for (int i = 0; i < g->nnodes; i++) p->kernel_of[i] = -1;
  return p;
}

PKernel *plan_kernel_new(Plan *p, const Node *root) {
  PKernel *k = arena_alloc(p->g->ctx->arena, sizeof *k);
  k->id = p->kernels.len;
  k->root = root;
  k->stream = -1;
  k->npasses = 1;
  vec_push(p->g->ctx->arena, &p->kernels, k);
  return k;
}

Plan *plan_naive(Graph *g, DType dt) {
  Plan *p = plan_new(g, dt);
  int *uses = tile_use_counts(g);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (n == g->output || tile_materialized(g, uses, n)) {
      if (n != g->output && n->op == OP_INPUT) continue;
      if (n == g->output && n->op == OP_INPUT) {
        PKernel *k = plan_kernel_new(p, n);
        k->naive = true;
        vec_push(g->ctx->arena, &k->outs, n);
        continue;
      }
      PKernel *k = plan_kernel_new(p, n);
      k->naive = true;
      vec_push(g->ctx->arena, &k->outs, n);
      p->kernel_of[n->id] = k->id;
    }
  }
  return p;
}

static bool same_structure(const Graph *a, const Graph *b, char *why, size_t n) {
  if (a->nnodes != b->nnodes || a->ninputs != b->ninputs || a->output->id != b->output->id) {
    snprintf(why, n, "the graph has %d nodes at these sizes, %d at the planned ones", b->nnodes, a->nnodes);
    return false;
  }
  for (int i = 0; i < a->nnodes; i++) {
    const Node *x = a->nodes[i], *y = b->nodes[i];
    bool same = x->op == y->op && x->nin == y->nin && x->kind == y->kind && x->shape.rank == y->shape.rank &&
                x->axis == y->axis && !memcmp(x->perm, y->perm, sizeof x->perm);
    for (int k = 0; same && k < x->nin; k++) same = x->in[k]->id == y->in[k]->id;
    if (!same) {
      snprintf(why, n, "node %%%d differs from the planned graph's at these sizes", i);
      return false;
    }
  }
  return true;
}

static int64_t pow2floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

Plan *plan_transfer(const Plan *p, Graph *g, char *why, size_t whylen) {
  if (!same_structure(p->g, g, why, whylen)) return NULL;
  Plan *q = plan_new(g, p->dtype);
  for (int i = 0; i < g->nnodes; i++) q->kernel_of[i] = p->kernel_of[i];
  for (int ki = 0; ki < p->kernels.len; ki++) {
    const PKernel *src = p->kernels.data[ki];
    PKernel *k = plan_kernel_new(q, g->nodes[src->root->id]);
    k->naive = src->naive;
    for (int i = 0; i < src->outs.len; i++) vec_push(g->ctx->arena, &k->outs, g->nodes[src->outs.data[i]->id]);
    if (k->naive) continue;
    if (!plan_axes(q, k)) {
      snprintf(why, whylen, "kernel %d: %s", ki, k->why);
      return NULL;
    }
    for (int m = 0; m < src->nmerge; m++) {
      int a = plan_axis_of_slot(k, src->merge[m][0].node, src->merge[m][0].dim);
      int b = plan_axis_of_slot(k, src->merge[m][1].node, src->merge[m][1].dim);
      if (a >= 0 && b >= 0 && a != b) plan_merge_axes(k, a < b ? a : b, a < b ? b : a);
    }
    /* each planned axis to the axis its representative slot runs along here
       (none: it has size 1 at these sizes) */
    k->stream = -1;
    for (int oa = 0; oa < src->naxes; oa++) {
      int a = plan_axis_of_slot(k, src->axrep[oa].node, src->axrep[oa].dim);
      if (a < 0) continue;
      PAxis *ax = &k->ax[a];
      const PAxis *sa = &src->ax[oa];
      ax->role = sa->role;
      int64_t most = pow2floor(ax->size) / 2;
      if (most < 1) most = 1;
      ax->tile = sa->tile < most ? sa->tile : most;
      if (sa->role == AX_WHOLE) {
        int64_t t = 1;
        while (t < ax->size) t *= 2;
        ax->tile = t;
      }
      ax->splits = sa->splits;
      int64_t tiles = (ax->size + ax->tile - 1) / ax->tile;
      if (ax->splits > tiles) ax->splits = tiles > 0 ? tiles : 1;
      if (oa == src->stream) k->stream = a;
    }
    k->threads = src->threads;
    k->stages = src->stages;
    if (!plan_stream(q, k)) {
      snprintf(why, whylen, "kernel %d: %s", ki, k->why);
      return NULL;
    }
  }
  return q;
}
