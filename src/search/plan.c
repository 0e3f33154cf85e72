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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

Plan *plan_new(Graph *g, DType dt) {
  Arena *a = g->ctx->arena;
  Plan *p = arena_alloc(a, sizeof *p);
  p->g = g;
  p->dtype = dt;
  size_t nn = (size_t)(g->nnodes ? g->nnodes : 1);
  p->kernel_of = arena_alloc(a, sizeof(int) * nn);
  p->marks = arena_alloc(a, sizeof *p->marks);
  p->marks->seen_at = arena_alloc(a, sizeof(int) * nn);
  p->marks->member_at = arena_alloc(a, sizeof(int) * nn);
  p->marks->local_at = arena_alloc(a, sizeof(int) * nn);
  p->marks->count_at = arena_alloc(a, sizeof(int) * nn);
  p->marks->slot_at = arena_alloc(a, sizeof(int) * nn);
  p->marks->flag_at = arena_alloc(a, sizeof(bool) * nn);
  p->marks->sign_at = arena_alloc(a, nn);
  for (int i = 0; i < g->nnodes; i++) p->kernel_of[i] = -1;
  return p;
}

int plan_stamps(Plan *p, int n) {
  /* (a search of millions of walks could run the counter out: start over) */
  if (p->marks->stamp > INT_MAX - n - 1) {
    size_t nn = (size_t)(p->g->nnodes ? p->g->nnodes : 1);
    memset(p->marks->seen_at, 0, sizeof(int) * nn);
    memset(p->marks->member_at, 0, sizeof(int) * nn);
    memset(p->marks->local_at, 0, sizeof(int) * nn);
    p->marks->stamp = 0;
  }
  int first = p->marks->stamp + 1;
  p->marks->stamp += n;
  return first;
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

static int by_id(const void *a, const void *b) {
  int x = (*(const Node *const *)a)->id, y = (*(const Node *const *)b)->id;
  return (x > y) - (x < y);
}

void plan_sort_nodes(NodeList *l) {
  if (l->len > 1) qsort(l->data, (size_t)l->len, sizeof *l->data, by_id);
}

const Node *plan_naive_node(const PKernel *k) {
  return k->views.len && k->views.data[0] ? k->views.data[0] : k->root;
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

static bool commutes(Op op) {
  return op == OP_ADD || op == OP_MUL || op == OP_MAX || op == OP_MIN || op == OP_EQ || op == OP_NE;
}

/* Match the planned graph a onto graph b of the same program at other
   sizes, from the outputs down: same ops, attributes and operand
   structure; map[a node] = its b node.  Several a nodes may meet in one b
   node (equal sizes make hash-consing share a constant). */
static bool match(const Graph *a, const Graph *b, const Node *x, const Node *y, int *map, char *why, size_t n) {
  /* a constant is written into the kernels that read it, never planned: one
     shared at these sizes and not at others (B = D = 256 makes the two
     means' divisors one node) still matches */
  if (x->op == OP_CONST && y->op == OP_CONST && x->kind == y->kind && x->shape.rank == y->shape.rank) {
    if (map[x->id] < 0) map[x->id] = y->id;
    return true;
  }
  if (map[x->id] >= 0) {
    if (map[x->id] == y->id) return true;
    snprintf(why, n, "node %%%d meets two nodes at these sizes", x->id);
    return false;
  }
  bool same = x->op == y->op && x->nin == y->nin && x->kind == y->kind && x->shape.rank == y->shape.rank &&
              x->axis == y->axis && !memcmp(x->perm, y->perm, sizeof x->perm) &&
              (x->op != OP_INPUT || x->input_index == y->input_index);
  if (!same) {
    snprintf(why, n, "node %%%d (%s) has no counterpart at these sizes", x->id, op_info[x->op].name);
    return false;
  }
  map[x->id] = y->id;
  if (x->nin == 2 && commutes(x->op)) {
    /* the builders order a commutative op's operands by node id, which
       other sizes can change: the other order too, from the same map */
    size_t bytes = sizeof(int) * (size_t)a->nnodes;
    int *saved = malloc(bytes);
    if (saved) memcpy(saved, map, bytes);
    if (match(a, b, x->in[0], y->in[0], map, why, n) && match(a, b, x->in[1], y->in[1], map, why, n)) {
      free(saved);
      return true;
    }
    if (!saved) return false;
    memcpy(map, saved, bytes);
    free(saved);
    return match(a, b, x->in[0], y->in[1], map, why, n) && match(a, b, x->in[1], y->in[0], map, why, n);
  }
  for (int k = 0; k < x->nin; k++)
    if (!match(a, b, x->in[k], y->in[k], map, why, n)) return false;
  return true;
}

static int64_t pow2floor(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

bool plan_matches(const Plan *p, Graph *g) {
  const Graph *G = p->g;
  char why[200];
  int *map = arena_alloc(g->ctx->arena, sizeof(int) * (size_t)(G->nnodes ? G->nnodes : 1));
  for (int i = 0; i < G->nnodes; i++) map[i] = -1;
  return G->ninputs == g->ninputs && match(G, g, G->output, g->output, map, why, sizeof why);
}

Plan *plan_transfer(const Plan *p, Graph *g, char *why, size_t whylen) {
  const Graph *G = p->g;
  int *map = arena_alloc(g->ctx->arena, sizeof(int) * (size_t)(G->nnodes ? G->nnodes : 1));
  for (int i = 0; i < G->nnodes; i++) map[i] = -1;
  if (G->ninputs != g->ninputs || !match(G, g, G->output, g->output, map, why, whylen)) return NULL;
  Plan *q = plan_new(g, p->dtype);
  q->sms = p->sms;
  for (int i = 0; i < G->nnodes; i++) {
    if (map[i] < 0 || p->kernel_of[i] < 0) continue;
    int *ko = &q->kernel_of[map[i]];
    if (*ko >= 0 && *ko != p->kernel_of[i]) {
      snprintf(why, whylen, "two stored nodes meet in node %%%d at these sizes", map[i]);
      return NULL;
    }
    *ko = p->kernel_of[i];
  }
#define MAPPED(id) ((id) >= 0 && map[id] >= 0 ? map[id] : -1)
  for (int ki = 0; ki < p->kernels.len; ki++) {
    const PKernel *src = p->kernels.data[ki];
    const Node *root = src->root;
    for (int i = 0; i < src->views.len; i++)
      if (src->views.data[i] && src->outs.data[i] == root) root = src->views.data[i];
    if (MAPPED(root->id) < 0) {
      snprintf(why, whylen, "kernel %d's node %%%d has no counterpart at these sizes", ki, root->id);
      return NULL;
    }
    PKernel *k = plan_kernel_new(q, g->nodes[MAPPED(root->id)]);
    k->naive = src->naive;
    for (int i = 0; i < src->outs.len; i++) {
      /* an out stored through a reshape: the reshape (plan_axes finds the view again) */
      const Node *o = i < src->views.len && src->views.data[i] ? src->views.data[i] : src->outs.data[i];
      int m = MAPPED(o->id);
      if (m < 0) {
        snprintf(why, whylen, "kernel %d's output has no counterpart at these sizes", ki);
        return NULL;
      }
      vec_push(g->ctx->arena, &k->outs, g->nodes[m]);
    }
    if (k->naive) continue;
    if (!plan_axes(q, k)) {
      snprintf(why, whylen, "kernel %d: %s", ki, k->why);
      return NULL;
    }
    for (int m = 0; m < src->nmerge; m++) {
      int a = plan_axis_of_slot(k, MAPPED(src->merge[m][0].node), src->merge[m][0].dim);
      int b = plan_axis_of_slot(k, MAPPED(src->merge[m][1].node), src->merge[m][1].dim);
      if (a >= 0 && b >= 0 && a != b) plan_merge_axes(k, a < b ? a : b, a < b ? b : a);
    }
    /* each planned axis to the axis its representative slot runs along here
       (none: it has size 1 at these sizes) */
    k->stream = -1;
    for (int oa = 0; oa < src->naxes; oa++) {
      int a = plan_axis_of_slot(k, MAPPED(src->axrep[oa].node), src->axrep[oa].dim);
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
#undef MAPPED
    k->threads = src->threads;
    k->stages = src->stages;
    if (!plan_stream(q, k)) {
      snprintf(why, whylen, "kernel %d: %s", ki, k->why);
      return NULL;
    }
  }
  return q;
}
