/*
 * search.c: choosing a plan.
 *
 * The state of the search is the set of stored nodes and which kernel
 * stores each; a kernel's members, axes and stream law follow from it
 * (axes.c, stream.c).  It starts from the naive partition and improves it
 * greedily by moves, each kept only if the predicted time of the whole plan
 * drops (cost.h):
 *
 *   fuse n    stop storing n: its computation moves into the one kernel
 *             that reads it (recomputed in each reader if it is cheap and
 *             elementwise);
 *   cut n     store an elementwise node n and fuse every stored product
 *             or reduction whose only reader is n into n's kernel (SwiGLU's
 *             gate and up products meet in silu(g)·u's kernel); or, where n
 *             is a product's operand, store n alone, so that the product
 *             loads it instead of computing it (g ⊙ W of RMSNorm → matmul).
 *   dissolve  where fusing n does not pay: stop storing every node of n's
 *             kernel at once when one other kernel reads them all (layer
 *             norm's row sum and rstd beside the product whose mean was
 *             pulled out: moved one at a time, the sum keeps its kernel).
 *
 * Stored nodes are tried in reverse topological order (consumers first),
 * so chains collapse from the output up; sweeps repeat until none helps.
 * Every kernel of a candidate is configured by enumeration: which reduced
 * axis streams (or none), its tile, the other reduced axes held whole or
 * looped inside, equal-size reduced axes streamed in lockstep, the output
 * axes' block tiles and the thread count; each configuration is lowered
 * (lower_plan.c) in a scratch arena and priced, and the cheapest wins.
 * Prices are cached by the kernel's member set and outputs.  Everything is
 * deterministic: no hashing of addresses, ties broken by order.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cost/cost.h"
#include "search.h"

typedef struct Group {
  VEC(const Node *) outs;
  bool alive;
} Group;

/* A priced kernel, by its key (kernel_key: its nodes) and its shape key
   (shape_key: any kernel alike) */
typedef struct Cache {
  uint64_t key;
  double cost;
  bool split;       /* its best configuration splits the stream: a combine kernel follows */
  bool fused;       /* false: its members share no iteration space (plan_axes), cost is the naive kernel's */
} Cache;

typedef struct S {
  Graph *g;
  Arena *a;          /* the graph's arena (the result lives here) */
  DType dt;
  const Gpu *gpu;
  const SearchOpts *o;
  SearchStats *stats;
  int launches;      /* the last plan priced: kernels launched (a split's combine counted) */
  bool final;        /* configuring the final plan (the user's --schedule applies) */
  int nn;
  int *group_of;     /* per node: the group that stores it, or -1 */
  VEC(Group) groups;
  Cache *cache;
  int ncache, capcache;
  int *slot;         /* open-addressed index of cache by key: -1 empty (nslot a power of 2, at most half full) */
  int nslot;
  int *uses;
  double t0, cpu0; /* wall clock and this thread's CPU time at the start (the time limit counts CPU time) */
  Arena *scratch;    /* where each plan is built and priced (reset after each) */
  Arena *lowering;   /* where each configuration of a kernel is lowered to be priced (reset after each) */
  bool cyclic;       /* the last plan built: two kernels read what the other stores (priced infinite) */
  bool *flags[4];    /* zeroed(): the moves' walks' per-node flags */
} S;

static int64_t pow2ceil(int64_t v) {
  int64_t p = 1;
  while (p < v && p < ((int64_t)1 << 40)) p *= 2;
  return p;
}

/* ---- a kernel's configurations ---- */

static bool is_product(const Node *n) { return op_info[n->op].cls == OPC_MATMUL; }

/* the kernel reads a product another kernel computed (through layout ops) */
static bool reads_product(const PKernel *k) {
  for (int i = 0; i < k->members.len; i++) {
    const Node *m = k->members.data[i];
    for (int j = 0; j < m->nin; j++) {
      const Node *n = m->in[j];
      while (!k->member[n->id] && op_info[n->op].cls == OPC_LAYOUT && n->nin == 1) n = n->in[0];
      if (!k->member[n->id] && is_product(n)) return true;
    }
  }
  return false;
}

/* an op of one element from one element each of its operands */
static bool pointwise_op(const Node *n) {
  OpClass c = op_info[n->op].cls;
  return c == OPC_UNARY || c == OPC_BINARY || c == OPC_COMPARE || c == OPC_SELECT;
}

/* ... or a layout op, which moves elements without computing */
static bool elementwise(const Node *n) { return pointwise_op(n) || op_info[n->op].cls == OPC_LAYOUT; }

/* n is a product, or computed from one elementwise; true also when the
   walk's budget runs out (the caller's answer is then the cautious one) */
static bool from_product(const Node *n, int *budget) {
  if (--*budget < 0) return true;
  if (is_product(n)) return true;
  if (!elementwise(n)) return false;
  for (int i = 0; i < n->nin; i++)
    if (from_product(n->in[i], budget)) return true;
  return false;
}

/* Does n, through pointwise ops along dimension d of its shape, read a
   reduction over d of a product's result, broadcast back (a softmax's max
   or sum over the keys of its scores)?  `size1` follows the operands of
   size 1 along d (a row statistic and what is computed from it), else the
   operands of n's size there too; layout ops and products end the walk.
   True when the budget runs out, the cautious answer: shared operands are
   walked once per path. */
static bool reduced_along(const Node *n, int d, bool size1, int *budget) {
  if (--*budget < 0) return true;
  if (d < 0) return false;
  if (size1 && op_info[n->op].cls == OPC_REDUCE) return n->axis == d && from_product(n->in[0], budget);
  if (!pointwise_op(n)) return false;
  for (int i = 0; i < n->nin; i++) {
    const Node *c = n->in[i];
    int cd = d - (n->shape.rank - c->shape.rank);
    if (cd < 0) continue;
    bool one = c->shape.d[cd].n == 1 && n->shape.d[d].n > 1; /* broadcast along d: a row statistic */
    if (size1 ? c->shape.d[cd].n == 1 && reduced_along(c, cd, true, budget) : reduced_along(c, cd, one, budget))
      return true;
  }
  return false;
}

/* the kernel's product reads an operand that normalizes a product along
   its contraction axis (attention's P = exp(s - max s) / sum s: what
   online softmax streams; RMSNorm's row scale of an input is not one) */
static bool normalized_operand(const PKernel *k) {
  for (int i = 0; i < k->members.len; i++) {
    const Node *m = k->members.data[i];
    if (!is_product(m)) continue;
    const Node *a = m->in[0], *b = m->in[1];
    int ba = 1024, bb = 1024;
    if (reduced_along(a, a->shape.rank - 1, false, &ba) || reduced_along(b, b->shape.rank - 2, false, &bb)) return true;
  }
  return false;
}

/* the kernel's one product has its columns on axis st, reduced in the
   kernel and not stored (the logits a cross-entropy streams over) */
static bool product_cols_streamed(const PKernel *k, int st) {
  if (st < 0 || k->ax[st].in_output) return false;
  for (int i = 0; i < k->members.len; i++) {
    const Node *m = k->members.data[i];
    if (is_product(m)) return pk_axis(k, m, m->shape.rank - 1) == st;
  }
  return false;
}

/* the kernel stores the program's result (itself or through a reshape) */
static bool stores_result(const S *s, const PKernel *k) {
  for (int i = 0; i < k->outs.len; i++)
    if (k->outs.data[i] == s->g->output || (k->views.len > i && k->views.data[i] == s->g->output)) return true;
  return false;
}

/* Is axis a contracted by a product and reduced by nothing else (may it
   be an INNER axis, looped inside the product)? */
static bool contraction_only(const PKernel *k, int a) {
  bool any = false;
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    bool prod = op_info[n->op].cls == OPC_MATMUL;
    if (k->redax[n->id] == a) {
      if (!prod) return false;
      any = true;
    }
  }
  return any;
}

/* Does axis a take part in a product (needs a tensor-core tile of 16 or more)? */
static bool in_product(const PKernel *k, int a) {
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    if (!is_product(n)) continue;
    int r = n->shape.rank;
    if (k->redax[n->id] == a || k->dimax[n->id][r - 1] == a || k->dimax[n->id][r - 2] == a) return true;
  }
  return false;
}

typedef struct Cand {
  int stream;          /* axis, -1 none */
  int64_t stile, rtile, ctile;
  int threads;
  int64_t splits;      /* blocks dividing the stream */
} Cand;

/* May axes a and b stream in lockstep: does no member run along both (as
   two dimensions, or as a dimension and the axis it reduces)? */
static bool independent(const PKernel *k, int a, int b) {
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    bool on_a = k->redax[n->id] == a, on_b = k->redax[n->id] == b;
    for (int d = 0; d < n->shape.rank; d++) on_a |= k->dimax[n->id][d] == a, on_b |= k->dimax[n->id][d] == b;
    if (on_a && on_b) return false;
  }
  return true;
}

/* Set roles and tiles for candidate c; false if it makes no sense. */
static bool apply(PKernel *k, const Cand *c, int row, int col) {
  for (int a = 0; a < k->naxes; a++) {
    PAxis *ax = &k->ax[a];
    ax->splits = 1;
    if (ax->reduced) {
      /* a contraction, or a row reduced and stored (softmax): streamed
         (a stored row in passes), held whole, or a long contraction looped
         inside the stream; a product's tile is 16 or more (mma) */
      if (a == c->stream) {
        if (c->stile < 16 && in_product(k, a)) return false;
        ax->role = AX_STREAM;
        ax->tile = c->stile;
        if (!ax->in_output) ax->splits = c->splits;
      } else if (ax->in_output || ax->size <= 256 || !contraction_only(k, a)) {
        ax->role = AX_WHOLE;
        ax->tile = pow2ceil(ax->size < 16 && in_product(k, a) ? 16 : ax->size);
        if (ax->tile > 16384) return false;
      } else {
        ax->role = AX_INNER; /* a nested loop */
        ax->tile = 64;
      }
    } else {
      ax->role = AX_GRID;
      int64_t t = a == row ? c->rtile : a == col ? c->ctile : 1;
      int64_t lim = pow2ceil(ax->size);
      if (in_product(k, a)) {
        /* a product's tile: 16 or more (mma), no more than the axis padded to 16 */
        int64_t most = pow2ceil(ax->size < 16 ? 16 : ax->size);
        t = t < 16 ? 16 : t > most ? most : t;
      }
      ax->tile = t > lim && !in_product(k, a) ? lim : t;
    }
  }
  /* an inner axis is looped inside its product: nothing else in the
     kernel may run along it (a product along it would be computed once,
     outside the loop, for its first chunk only) */
  for (int a = 0; a < k->naxes; a++) {
    if (k->ax[a].role != AX_INNER) continue;
    for (int i = 0; i < k->members.len; i++) {
      const Node *n = k->members.data[i];
      if (!is_product(n) && op_info[n->op].cls != OPC_REDUCE) continue;
      for (int d = 0; d < n->shape.rank; d++)
        if (k->dimax[n->id][d] == a) return false;
    }
  }
  k->stream = c->stream;
  k->threads = c->threads;
  k->stages = 2;
  return true;
}

static uint64_t kernel_key(const PKernel *k) {
  uint64_t h = 0x12345;
  for (int i = 0; i < k->members.len; i++) h = hash_mix(h, (uint64_t)k->members.data[i]->id);
  h = hash_mix(h, 0xabcdef);
  for (int i = 0; i < k->outs.len; i++) h = hash_mix(h, (uint64_t)k->outs.data[i]->id);
  return h;
}

/* ---- the shape key: kernels alike in all that pricing reads share a price ----

   A kernel's price depends on its members' ops, attributes and shapes,
   how they connect, what they read from memory (stored by another
   kernel, or an input, through which views), what they store, and three
   facts of the graph beyond them: whether an operand is a product another
   kernel computed, whether a product's operand is normalized along its
   contraction (walks that leave the kernel), whether it stores the
   program's result.  The shape key hashes exactly those, with node ids
   replaced by first-appearance order, so the layers of a deep model --
   alike but for their ids and where their weights sit in a stacked
   parameter -- are priced once: at 32 layers the budget was spent before
   the search reached the first ones.  A slice's offset enters as its
   alignment (offset times stride, modulo 64 elements).  TS_CHECK_SHAPE_KEY=1
   prices every kernel anyway and reports a shape key whose prices differ
   (tests/search/check_shape_key.sh runs it over the test programs, and
   with TS_PLANT_SHAPE_KEY=1, a key without shapes, sees it fail). */
typedef struct KeyWalk { const Plan *p; int stamp, next; uint64_t h; } KeyWalk;

static uint64_t key_node(const Node *n) {
  /* a planted bug for the check's test: shapes left out of the key */
  static int plant = -1;
  if (plant < 0) plant = getenv("TS_PLANT_SHAPE_KEY") && atoi(getenv("TS_PLANT_SHAPE_KEY"));
  if (plant) return hash_mix((uint64_t)n->op, n->kind);
  int64_t lo = 0, hi = 0;
  if (n->op == OP_SLICE) {
    int64_t stride = 1;
    for (int d = n->axis + 1; d < n->shape.rank; d++) stride *= n->shape.d[d].n;
    lo = (n->lo * stride) % 64, hi = n->hi - n->lo;
  }
  /* an input's value is its position among the inputs: not what pricing reads */
  return ir_attrs_mix(ir_head_hash(n), n, n->op == OP_INPUT ? 0 : n->value, lo, hi);
}

/* n's local number: members first (in id order), then what they read, in
   order of first appearance (described when first met) */
static int key_ref(KeyWalk *w, const Node *n) {
  struct PlanMarks *m = w->p->marks;
  if (m->seen_at[n->id] == w->stamp) return m->local_at[n->id];
  m->seen_at[n->id] = w->stamp;
  int me = m->local_at[n->id] = w->next++;
  bool stored = w->p->kernel_of[n->id] >= 0, leaf = op_info[n->op].cls == OPC_LEAF;
  w->h = hash_mix(w->h, stored ? 'M' : leaf ? 'L' : 'V');
  w->h = hash_mix(w->h, key_node(n));
  w->h = hash_mix(w->h, (uint64_t)n->role * 7 + (n == w->p->g->output));
  if (stored) w->h = hash_mix(w->h, (uint64_t)tile_storage_of(w->p->dtype, n, GB_TEMP));
  if (!stored && !leaf) /* a view or gather read in place */
    for (int i = 0; i < n->nin; i++) w->h = hash_mix(w->h, (uint64_t)key_ref(w, n->in[i]));
  return me;
}

static bool normalized_operand(const PKernel *k);
static bool stores_result(const S *s, const PKernel *k);

/* k's members were just found (plan_members) */
static uint64_t shape_key(const S *s, Plan *p, const PKernel *k) {
  struct PlanMarks *m = p->marks;
  KeyWalk w = {.p = p, .stamp = plan_stamps(p, 1), .h = 0x5a4e};
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    m->seen_at[n->id] = w.stamp;
    m->local_at[n->id] = w.next++;
  }
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    w.h = hash_mix(w.h, key_node(n));
    w.h = hash_mix(w.h, n == s->g->output);
    for (int j = 0; j < n->nin; j++) w.h = hash_mix(w.h, (uint64_t)key_ref(&w, n->in[j]));
  }
  for (int i = 0; i < k->outs.len; i++) {
    const Node *v = k->views.len > i ? k->views.data[i] : NULL;
    w.h = hash_mix(w.h, (uint64_t)key_ref(&w, k->outs.data[i]));
    w.h = hash_mix(w.h, v ? key_node(v) : 0);
  }
  w.h = hash_mix(w.h, (uint64_t)key_ref(&w, k->root));
  w.h = hash_mix(w.h, (uint64_t)normalized_operand(k) * 2 + stores_result(s, k));
  return w.h;
}

/* A binary min-heap of ints. */
static void heap_push(int *h, int *n, int v) {
  int i = (*n)++;
  for (; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
  h[i] = v;
}

static int heap_pop(int *h, int *n) {
  int top = h[0], v = h[--*n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = v;
  return top;
}

/* Kernel order: every kernel after the kernels storing what it reads
   (walking down from its outputs through nodes no one stores), ties by the
   smallest output id.  Moves that keep each kernel where its first output
   was leave that order topological already (checked in one pass over the
   dependences); a move that merges kernels may not, and then Kahn's
   algorithm reorders them.  A cycle (two kernels each reading what the
   other stores) sets s->cyclic: no plan runs it. */
static void order_groups(S *s, int *order, int no) {
  int *pos = arena_alloc(s->g->ctx->arena, sizeof(int) * (size_t)s->groups.len);
  int *mark = arena_alloc(s->g->ctx->arena, sizeof(int) * (size_t)s->nn);
  for (int j = 0; j < no; j++) pos[order[j]] = j;
  VEC(int) from = {0}, to = {0};
  const Node **stack = arena_alloc(s->g->ctx->arena, sizeof(Node *) * (size_t)s->nn);
  bool sorted = true;
  for (int j = 0; j < no; j++) {
    int gi = order[j], sp = 0;
    const Group *G = &s->groups.data[gi];
    for (int i = 0; i < G->outs.len; i++) stack[sp++] = G->outs.data[i], mark[G->outs.data[i]->id] = j + 1;
    while (sp) {
      const Node *m = stack[--sp];
      for (int k = 0; k < m->nin; k++) {
        const Node *x = m->in[k];
        if (mark[x->id] == j + 1) continue;
        mark[x->id] = j + 1;
        int xg = s->group_of[x->id];
        if (xg < 0) {
          stack[sp++] = x;
        } else if (xg != gi) {
          vec_push(s->g->ctx->arena, &from, pos[xg]);
          vec_push(s->g->ctx->arena, &to, j);
          sorted &= pos[xg] < j;
        }
      }
    }
  }
  s->cyclic = false;
  if (sorted) return;
  /* Kahn's algorithm, always taking the ready kernel earliest in the
     order given (a min-heap of positions; edges as adjacency lists) */
  Arena *a = s->g->ctx->arena;
  int *indeg = arena_alloc(a, sizeof(int) * (size_t)no);
  int *start = arena_alloc(a, sizeof(int) * (size_t)(no + 1));
  int *adj = arena_alloc(a, sizeof(int) * (size_t)(from.len ? from.len : 1));
  int *heap = arena_alloc(a, sizeof(int) * (size_t)no);
  int *by_pos = arena_alloc(a, sizeof(int) * (size_t)no);
  memcpy(by_pos, order, sizeof(int) * (size_t)no);
  for (int e = 0; e < from.len; e++) indeg[to.data[e]]++, start[from.data[e] + 1]++;
  for (int j = 0; j < no; j++) start[j + 1] += start[j];
  int *fill = arena_alloc(a, sizeof(int) * (size_t)no);
  memcpy(fill, start, sizeof(int) * (size_t)no);
  for (int e = 0; e < from.len; e++) adj[fill[from.data[e]]++] = to.data[e];
  bool *done = arena_alloc(a, sizeof(bool) * (size_t)no);
  int nh = 0, n = 0;
  for (int j = 0; j < no; j++)
    if (!indeg[j]) heap_push(heap, &nh, j);
  while (nh) {
    int pick = heap_pop(heap, &nh);
    done[pick] = true;
    order[n++] = by_pos[pick];
    for (int e = start[pick]; e < start[pick + 1]; e++)
      if (--indeg[adj[e]] == 0) heap_push(heap, &nh, adj[e]);
  }
  if (n < no) { /* a cycle: the rest in the order given */
    s->cyclic = true;
    for (int j = 0; j < no; j++)
      if (!done[j]) order[n++] = by_pos[j];
  }
}

/* Build the plan of state s in the current arena, its kernels in
   order_groups' order. */
static Plan *state_plan(S *s, bool naive_all) {
  Plan *p = plan_new(s->g, s->dt);
  p->sms = s->gpu->sms;
  int ng = s->groups.len;
  /* groups by their smallest output id, then in dependence order */
  int *order = arena_alloc(s->g->ctx->arena, sizeof(int) * (size_t)(ng ? ng : 1));
  bool *listed = arena_alloc(s->g->ctx->arena, sizeof(bool) * (size_t)(ng ? ng : 1));
  int no = 0;
  for (int i = 0; i < s->nn; i++) {
    int gi = s->group_of[i];
    if (gi >= 0 && !listed[gi]) listed[gi] = true, order[no++] = gi;
  }
  order_groups(s, order, no);
  for (int j = 0; j < no; j++) {
    Group *G = &s->groups.data[order[j]];
    const Node *root = G->outs.data[G->outs.len - 1];
    PKernel *k = plan_kernel_new(p, root);
    k->naive = naive_all;
    for (int i = 0; i < G->outs.len; i++) {
      vec_push(s->g->ctx->arena, &k->outs, G->outs.data[i]);
      if (G->outs.data[i] != s->g->output || G->outs.data[i]->op != OP_INPUT) p->kernel_of[G->outs.data[i]->id] = k->id;
    }
  }
  return p;
}

/* Price kernel k of plan p (its outs set, members computed here) with
   configuration c: lower it alone into a program and cost it. */
static double price(S *s, Plan *p, PKernel *k) {
  if (!plan_stream(p, k)) return INFINITY;
  Plan one = *p;
  one.kernels.data = &k;
  one.kernels.len = one.kernels.cap = 1;
  one.pricing = true;
  /* the lowered program is priced and forgotten: built in an arena of its
     own, emptied after (a kernel is priced in dozens of configurations) */
  Arena *outer = s->g->ctx->arena;
  s->g->ctx->arena = s->lowering;
  TileProgram *tp = tile_lower_plan(&one);
  double t = tp && tile_check(tp, NULL) ? cost_program(tp, s->gpu, NULL) /* a split's combine kernel too */ : INFINITY;
  s->g->ctx->arena = outer;
  arena_reset(s->lowering);
  return t;
}

/* Price k with the user's pipeline depth, or the deepest of 3 and 2
   that fits in shared memory (the H200 sweep of 2026-12-03: 3 stages as
   fast or faster than 2 for every product loop timed, on both targets). */
static double price_staged(S *s, Plan *p, PKernel *k, const Schedule *sc) {
  if (sc && sc->stages) {
    k->stages = sc->stages;
    return price(s, p, k);
  }
  k->stages = 3;
  double t = price(s, p, k);
  if (isfinite(t)) return t;
  k->stages = 2;
  return price(s, p, k);
}

/* The naive kernel of a kernel's one output (the fallback of a kernel the
   fused lowering cannot realize). */
/* Can node n be computed by a naive kernel given what p stores: every
   reduction or product under it (through nodes not stored) is stored? */
static bool naive_ok(const Plan *p, const Node *n, bool top) {
  if (!top && (p->kernel_of[n->id] >= 0 || op_info[n->op].cls == OPC_LEAF)) return true;
  OpClass c = op_info[n->op].cls;
  if (!top && (c == OPC_REDUCE || c == OPC_MATMUL)) return false;
  for (int i = 0; i < n->nin; i++)
    if (!naive_ok(p, n->in[i], false)) return false;
  return true;
}

static double price_naive(S *s, Plan *p, PKernel *k) {
  if (k->outs.len != 1 || !naive_ok(p, plan_naive_node(k), true)) return INFINITY;
  bool was = k->naive;
  k->naive = true;
  Plan one = *p;
  one.kernels.data = &k;
  one.kernels.len = one.kernels.cap = 1;
  one.pricing = true;
  TileProgram *tp = tile_lower_plan(&one);
  k->naive = was;
  if (!tp || !tile_check(tp, NULL)) return INFINITY;
  return cost_program(tp, s->gpu, NULL);
}

/* blocks of the grid (GRID axes only) */
static double grid_blocks(const PKernel *k) {
  double b = 1;
  for (int a = 0; a < k->naxes; a++)
    if (k->ax[a].role == AX_GRID) b *= (double)((k->ax[a].size + k->ax[a].tile - 1) / k->ax[a].tile);
  return b;
}

bool schedule_parse(const char *spec, Schedule *out, char *why, size_t whylen) {
  memset(out, 0, sizeof *out);
  const char *p = spec;
  while (*p) {
    const char *eq = strchr(p, '=');
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    if (!eq || eq > end) {
      snprintf(why, whylen, "'%.*s' is not KEY=VALUE (keys: " SCHEDULE_KEYS ")",
               (int)(end - p), p);
      return false;
    }
    char *stop;
    long long v = strtoll(eq + 1, &stop, 10);
    size_t kl = (size_t)(eq - p);
#define KEY(name) (kl == strlen(name) && !strncmp(p, name, kl))
    if (KEY("copy") || KEY("store")) {
      bool copy = KEY("copy");
      if (stop != end || eq + 1 == end || (v != 0 && v != 1)) {
        snprintf(why, whylen, "%s", copy ? "copy needs 0 (element-wise tile loads) or 1 (bulk copies: TMA)"
                                         : "store needs 0 (each thread stores its elements) or 1 (the tile "
                                           "through shared memory: a TMA store)");
        return false;
      }
      *(copy ? &out->copy : &out->store) = v ? 1 : 2;
      p = *end ? end + 1 : end;
      continue;
    }
    if (stop != end || eq + 1 == end || v < 1 || v > 65536) {
      snprintf(why, whylen, "%.*s needs a whole number from 1 to 65536", (int)(eq - p), p);
      return false;
    }
    bool tile_key = KEY("stream") || KEY("rows") || KEY("cols");
    if (tile_key && (v & (v - 1))) {
      snprintf(why, whylen, "%.*s needs a power of two (tiles are)", (int)kl, p);
      return false;
    }
    if (KEY("threads") && (v < 32 || v > 1024 || (v & (v - 1)))) {
      snprintf(why, whylen, "threads needs a power of two from 32 to 1024 (whole warps, as Triton launches them)");
      return false;
    }
    if (KEY("stages") && v > 8) {
      snprintf(why, whylen, "stages needs a number from 1 to 8");
      return false;
    }
    if (KEY("stream")) out->stream = v;
    else if (KEY("rows")) out->rows = v;
    else if (KEY("cols")) out->cols = v;
    else if (KEY("threads")) out->threads = (int)v;
    else if (KEY("stages")) out->stages = (int)v;
    else if (KEY("splits")) out->splits = v;
    else {
      snprintf(why, whylen, "unknown key '%.*s' (keys: " SCHEDULE_KEYS ")", (int)kl, p);
      return false;
    }
#undef KEY
    p = *end ? end + 1 : end;
  }
  return true;
}

/* Is configuration k (priced t) better than the best so far (priced best)?
   Cheaper by more than 1%; or within 1% with a longer streamed tile, then
   (gemm: a kernel with products) more threads: where the model cannot tell them
   apart, the H200 timed longer tiles and two warpgroups faster (attention's 128-key tiles over 64 and 32, 64-deep
   K tiles over 32 for split-K products: bench/results/2026-12-03-h200-
   sweep-*.json), as fewer trips pay fewer waits; without products, 8 to 16
   elements per thread (whole 16-byte vectors; bias_gelu_residual's one
   element per thread ran at 0.3 of the copy rate). */
static int64_t stream_tile(const PKernel *k) { return k->stream >= 0 ? k->ax[k->stream].tile : 0; }
/* elements of a block's tile per thread (the grid axes' tiles and the
   streamed tile), and how far that is from 8 to 16: a 16-byte vector of
   bf16 to two per thread */
static double per_thread(const PKernel *k) {
  double n = 1;
  for (int a = 0; a < k->naxes; a++)
    if (k->ax[a].role != AX_INNER) n *= (double)k->ax[a].tile;
  return n / (k->threads > 0 ? k->threads : 128);
}
static double off_vector(const PKernel *k) {
  for (int a = 0; a < k->naxes; a++)
    if (k->ax[a].role != AX_GRID) return 1; /* rows, streams: timed as they are */
  double e = per_thread(k);
  return e < 8 ? 8 / e : e > 16 ? e / 16 : 1;
}

static bool better(double t, const PKernel *k, double best, const PKernel *bk, bool gemm) {
  if (!isfinite(t)) return false;
  if (!isfinite(best) || t < best * 0.99) return true;
  if (t > best * 1.01) return false;
  if (stream_tile(k) != stream_tile(bk)) return stream_tile(k) > stream_tile(bk);
  if (gemm && k->threads != bk->threads) return k->threads > bk->threads;
  if (!gemm && off_vector(k) != off_vector(bk)) return off_vector(k) < off_vector(bk);
  return t < best;
}

/* Configure kernel k of plan p: the cheapest candidate (of those the
   user's schedule sc allows, when it is not NULL). */
static double configure_with(S *s, Plan *p, PKernel *k, const Schedule *sc, char *why, size_t whylen);

static double configure(S *s, Plan *p, PKernel *k, char *why, size_t whylen) {
  /* the user's schedule: for the final plan's kernels alone, so that it
     changes how the searched plan runs, not which plan is searched */
  const Schedule *sc = s->o && s->final ? s->o->sched : NULL;
  if (k->naive || !sc) return configure_with(s, p, k, NULL, why, whylen);
  /* a kernel with no reduced axis has no loop: the loop's choices do not apply to it */
  Schedule own = *sc;
  bool reduced = false;
  if (!plan_axes(p, k)) return configure_with(s, p, k, NULL, why, whylen);
  for (int a = 0; a < k->naxes; a++) reduced |= k->ax[a].reduced;
  if (!reduced) own.stream = own.stages = 0, own.splits = 0;
  sc = &own;
  /* copy and store change what a block asks for (a descriptor store stages
     its tile in shared memory), so the tiles are priced with them; a
     schedule the kernel cannot meet keeps what of it fits: its copy and
     store with the search's tiles, else neither */
  k->copy = sc->copy;
  k->store = sc->store;
  double t = configure_with(s, p, k, sc, why, whylen);
  if (!isfinite(t)) {
    s->stats->sched_unmet++;
    Schedule flags = {.copy = sc->copy, .store = sc->store};
    t = configure_with(s, p, k, &flags, why, whylen);
  }
  if (!isfinite(t)) {
    k->copy = k->store = 0;
    t = configure_with(s, p, k, NULL, why, whylen);
  }
  return t;
}

static double configure_with(S *s, Plan *p, PKernel *k, const Schedule *sc, char *why, size_t whylen) {
  if (!plan_axes(p, k)) {
    snprintf(why, whylen, "%s", k->why);
    return INFINITY;
  }
  /* equal-size reduced axes that are not stored stream in lockstep */
  for (int a = 0; a < k->naxes; a++)
    for (int b = a + 1; b < k->naxes; b++)
      if (k->ax[a].reduced && k->ax[b].reduced && !k->ax[a].in_output && !k->ax[b].in_output &&
          k->ax[a].size == k->ax[b].size && k->ax[a].size > 256 && independent(k, a, b)) {
        plan_merge_axes(k, a, b);
        b--;
      }
  /* rows and columns: the root's last two dimensions, where they are grid axes */
  const Node *root = k->root;
  int row = -1, col = -1, r = root->shape.rank;
  if (r >= 1) col = k->dimax[root->id][r - 1];
  if (r >= 2) row = k->dimax[root->id][r - 2];
  if (col >= 0 && k->ax[col].reduced) col = -1;
  if (row >= 0 && k->ax[row].reduced) row = -1;
  int nproducts = 0;
  for (int i = 0; i < k->members.len; i++) nproducts += is_product(k->members.data[i]);
  bool gemm = nproducts > 0;
  bool wide_ok = nproducts == 1 && stores_result(s, k) && !reads_product(k) && !normalized_operand(k);
  /* 64 x 256 on one warpgroup for a kernel of two products and a
     reduction whose output axis of 129..256 belongs to one product alone
     (attention's P⬝V at D = 256): with 128 columns that axis takes two
     blocks and each recomputes the scores (1.5x the tensor-core work); one
     accumulator of 64 x 256 is 128 registers a thread, as one 128 x 256 is
     on two warpgroups.  Not a gated MLP's three products (their
     accumulators together would spill) */
  bool whole_cols = false;
  if (gemm && nproducts == 2 && col >= 0 && k->ax[col].size > 128 && k->ax[col].size <= 256) {
    int owners = 0, reductions = 0;
    for (int i = 0; i < k->members.len; i++) {
      const Node *m = k->members.data[i];
      bool has = false;
      for (int d = 0; is_product(m) && d < m->shape.rank; d++) has |= pk_axis(k, m, d) == col;
      owners += has;
      reductions += op_info[m->op].cls == OPC_REDUCE;
    }
    whole_cols = owners == 1 && reductions > 0;
  }
  static const int64_t gemm_rows[] = {64, 128, 256}, gemm_cols[] = {64, 128, 256}, gemm_stream[] = {32, 64, 128};
  static const int64_t row_rows[] = {1, 4, 16}, row_cols[] = {128, 1024}, row_stream[] = {256, 1024};
  const int64_t *R = gemm ? gemm_rows : row_rows, *C = gemm ? gemm_cols : row_cols;
  const int64_t *T = gemm ? gemm_stream : row_stream;
  int nR = 3, nC = gemm ? 3 : 2, nT = gemm ? 3 : 2;
  bool tall_ok = nproducts == 1 && !reads_product(k) && !normalized_operand(k);
  static const int thread_counts[] = {128, 256};
  const int *TH = thread_counts;
  int nTH = 2;
  /* a fixed schedule: its values are the only candidates of their kind */
  if (sc && sc->rows) R = &sc->rows, nR = 1;
  if (sc && sc->cols) C = &sc->cols, nC = 1;
  if (sc && sc->stream) T = &sc->stream, nT = 1;
  if (sc && sc->threads) TH = &sc->threads, nTH = 1;
  double best = INFINITY;
  PKernel bestk = *k;
  why[0] = 0;
  /* stream choices: none, or each reduced axis */
  for (int st = -1; st < k->naxes; st++) {
    if (st >= 0 && !k->ax[st].reduced) continue;
    if (st < 0 && sc && (sc->stream || sc->stages || sc->splits > 1)) continue;
    for (int ti = 0; ti < (st >= 0 ? nT : 1); ti++)
      for (int ri = 0; ri < nR; ri++)
        for (int ci = 0; ci < nC; ci++)
          for (int th = 0; th < nTH; th++) {
            Cand c = {st, st >= 0 ? T[ti] : 0, R[ri], C[ci], TH[th], 1};
            if (st >= 0 && c.stile > pow2ceil(k->ax[st].size)) continue;
            /* Hopper's warpgroup gemm: 64 rows per 128 threads */
            if (gemm && c.threads > 128 && c.rtile < 128 && !(sc && sc->threads)) continue;
            if (row < 0 && ri) continue;
            if (col < 0 && ci) continue;
            if (!apply(k, &c, row, col)) continue;
            /* 128 x 256 product tiles on two warpgroups (TileLang's
               textbook GEMM's tile: 0.63 of the tensor-core rate against
               0.53 at 128 x 128): for a kernel of one product whose result
               leaves the program, that reads no other kernel's product and
               whose operands are not normalized along the contraction
               (attention's P).
               Two accumulators of that size are 256 registers a thread,
               and spill (swiglu's gate and up: 3.6x slower, session 5); a
               product whose result another kernel reads, or one that reads
               another's, would price a partition that stores a product
               against fused kernels whose loops cannot widen yet
               (attention's P and O, the cross-entropy's logits, a⬝W1 + b⬝W2's
               two accumulators): the search would trade the fused
               structures for a tile rate their loops do not get */
            if (gemm && c.ctile > 128 && !(sc && sc->cols) &&
                !(wide_ok && c.threads == 256 && row >= 0 && k->ax[row].tile == 128 && k->ax[col].tile == 256) &&
                !(whole_cols && c.threads == 128 && row >= 0 && k->ax[row].tile == 64 && k->ax[col].tile == k->ax[col].size))
              continue;
            /* 256 x 128 product tiles on two warpgroups, the 128 x 256
               tile turned: for a kernel of one product whose columns it
               streams and reduces (a cross-entropy's logits over the
               vocabulary), so a block's accumulator covers twice the rows
               for each weight tile it loads.  Measured on the H200
               (2026-12-06, linear_cross_entropy_8k): TileLang 20.6 -> 17.0 ms,
               Triton 17.8 -> 17.0 ms */
            if (gemm && c.rtile > 128 && !(sc && sc->rows) &&
                !(tall_ok && c.threads == 256 && row >= 0 && k->ax[row].tile == 256 && st >= 0 && c.stile <= 128 &&
                  (col < 0 || k->ax[col].tile <= 128) && product_cols_streamed(k, st)))
              continue;
            /* a tile apply clamped to its axis is not the one asked for */
            if (sc && ((sc->rows && row >= 0 && k->ax[row].tile != sc->rows) ||
                       (sc->cols && col >= 0 && k->ax[col].tile != sc->cols)))
              continue;
            /* a grid that leaves SMs idle: also split the stream across blocks */
            double blocks = grid_blocks(k);
            int64_t ntiles = st >= 0 ? (k->ax[st].size + c.stile - 1) / c.stile : 0;
            for (int64_t sp = 2; st >= 0 && sp * 2 <= ntiles &&
                                 (sc && sc->splits ? sp <= sc->splits
                                                   : blocks < 2.0 * s->gpu->sms && blocks * (double)sp <= 8.0 * s->gpu->sms);
                 sp *= 2) {
              if (sc && sc->splits && sp != sc->splits) continue;
              Cand cs = c;
              cs.splits = sp;
              if (!apply(k, &cs, row, col)) continue;
              double t = price_staged(s, p, k, sc);
              if (getenv("TS_SEARCH_TRACE2"))
                fprintf(stderr, "  cfg root %%%d stream %d tile %lld split %lld rows %lld cols %lld thr %d: %g %s\n",
                        k->root->id, st, (long long)c.stile, (long long)sp, (long long)c.rtile, (long long)c.ctile,
                        c.threads, t, k->why);
              if (better(t, k, best, &bestk, gemm)) best = t, bestk = *k;
            }
            if (sc && sc->splits > 1) continue;
            apply(k, &c, row, col);
            double t = price_staged(s, p, k, sc);
            if (getenv("TS_SEARCH_TRACE2"))
              fprintf(stderr, "  cfg root %%%d (%d members) stream %d tile %lld rows %lld cols %lld thr %d: %g %s\n", k->root->id, k->members.len, st,
                      (long long)c.stile, (long long)c.rtile, (long long)c.ctile, c.threads, t, k->why);
            if (better(t, k, best, &bestk, gemm)) {
              best = t;
              bestk = *k;
            } else if (!why[0] && k->why[0]) {
              snprintf(why, whylen, "%s", k->why);
            }
          }
  }
  *k = bestk;
  return best;
}

const char *search_stop_name(SearchStop st) {
  switch (st) {
  case STOP_SATURATED: return "no move improves the plan";
  case STOP_SWEEPS: return "sweep limit";
  case STOP_BUDGET: return "pricing budget spent";
  case STOP_TIME: return "time limit (where it stops depends on the machine)";
  }
  return "?";
}

/* ---- the search ---- */

/* ---- the price cache, by kernel key ---- */

static int *cache_probe(const S *s, uint64_t key) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  for (int i = (int)(h >> 32) & (s->nslot - 1);; i = (i + 1) & (s->nslot - 1))
    if (s->slot[i] < 0 || s->cache[s->slot[i]].key == key) return &s->slot[i];
}

static Cache *cache_find(const S *s, uint64_t key) {
  if (!s->nslot) return NULL;
  int c = *cache_probe(s, key);
  return c >= 0 ? &s->cache[c] : NULL;
}

/* entry c (about to be s->ncache) is key's */
static void cache_index(S *s, uint64_t key, int c) {
  if (2 * (c + 1) > s->nslot) {
    int n = s->nslot ? 2 * s->nslot : 256;
    s->slot = arena_alloc(s->a, sizeof(int) * (size_t)n);
    s->nslot = n;
    for (int i = 0; i < n; i++) s->slot[i] = -1;
    for (int i = 0; i < c; i++) *cache_probe(s, s->cache[i].key) = i;
  }
  *cache_probe(s, key) = c;
}

/* A new entry (in the graph's arena: the cache outlives each plan). */
static Cache *cache_add(S *s, uint64_t key, double cost, bool split, bool fused) {
  if (s->ncache == s->capcache) {
    int nc = s->capcache ? s->capcache * 2 : 64;
    s->cache = arena_realloc(s->a, s->cache, sizeof(Cache) * (size_t)s->capcache, sizeof(Cache) * (size_t)nc);
    s->capcache = nc;
  }
  cache_index(s, key, s->ncache);
  Cache *c = &s->cache[s->ncache++];
  c->key = key;
  c->cost = cost;
  c->split = split;
  c->fused = fused;
  return c;
}

static bool check_shape_key(void) {
  static int on = -1;
  if (on < 0) on = getenv("TS_CHECK_SHAPE_KEY") && atoi(getenv("TS_CHECK_SHAPE_KEY"));
  return on;
}

static double plan_cost(S *s, bool *all_ok) {
  Arena *home = s->g->ctx->arena;
  Arena *scratch = s->scratch;
  s->g->ctx->arena = scratch;
  Plan *p = state_plan(s, false);
  double total = 0;
  *all_ok = true;
  if (s->cyclic) {
    s->g->ctx->arena = home;
    arena_reset(scratch);
    *all_ok = false;
    return INFINITY;
  }
  s->launches = 0;
  for (int i = 0; i < p->kernels.len; i++) {
    PKernel *k = p->kernels.data[i];
    /* members first, for the cache key: a kernel priced before (or one
       alike) is not analysed again */
    plan_members(p, k);
    uint64_t key = kernel_key(k);
    Cache *hit = cache_find(s, key);
    /* a kernel of another shape key's shape (another layer's) is priced */
    Cache *alike = NULL;
    uint64_t skey = 0;
    if (!hit) {
      skey = shape_key(s, p, k);
      alike = cache_find(s, skey);
      if (alike && !check_shape_key()) {
        hit = cache_add(s, key, alike->cost, alike->split, alike->fused);
        alike = NULL;
      }
    }
    if (!hit) {
      double t;
      bool split = false, fused = plan_axes(p, k);
      if (!fused) {
        /* no fused kernel for these members (a reshape that merges a
           product's contraction axis): what the final plan falls back to */
        t = k->outs.len == 1 ? price_naive(s, p, k) : INFINITY;
        if (getenv("TS_SEARCH_TRACE2")) fprintf(stderr, "  kernel root %%%d: no axes (%s): naive %g\n", k->root->id, k->why, t);
      } else {
        char why[200];
        t = configure(s, p, k, why, sizeof why);
        split = isfinite(t) && k->stream >= 0 && k->ax[k->stream].splits > 1;
        if (!isfinite(t) && k->outs.len == 1) t = price_naive(s, p, k); /* what the final plan falls back to */
        s->stats->kernels_priced++;
      }
      if (alike && (alike->split != split || alike->fused != fused || !(alike->cost == t || fabs(alike->cost - t) <= 1e-12 * fabs(t))))
        fprintf(stderr, "tilesmith: shape key %016llx: kernel of %%%d priced %.9g%s, an alike one %.9g%s\n",
                (unsigned long long)skey, k->root->id, t, split ? " (split)" : fused ? "" : " (naive)", alike->cost,
                alike->split ? " (split)" : alike->fused ? "" : " (naive)");
      if (!alike) cache_add(s, skey, t, split, fused);
      hit = cache_add(s, key, t, split, fused);
    }
    if (!hit->fused) {
      *all_ok = false;
      total += hit->cost;
      s->launches++;
      if (!isfinite(hit->cost)) break;
      continue;
    }
    total += hit->cost;
    s->launches += 1 + hit->split;
  }
  s->g->ctx->arena = home;
  arena_reset(scratch);
  return total;
}

/* Remember a priced plan among the cheapest few (the chosen one is dropped at the end). */
static void note_cand(S *s, double cost, const char *what) {
  SearchStats *st = s->stats;
  if (!isfinite(cost)) return;
  int kernels = s->launches; /* the last plan priced: its kernels and its splits' combines */
  for (int i = 0; i < st->ncands; i++)
    if (fabs(st->cands[i].cost - cost) <= 1e-12 * cost && st->cands[i].kernels == kernels) return;
  int at;
  if (st->ncands < SEARCH_MAX_CANDS) at = st->ncands++;
  else if (st->cands[SEARCH_MAX_CANDS - 1].cost > cost) at = SEARCH_MAX_CANDS - 1;
  else return; /* no cheaper than the ones kept */
  int n = 0;
  for (int i = 0; i < s->groups.len; i++)
    if (s->groups.data[i].alive) n += s->groups.data[i].outs.len + 1;
  /* the slot's old partition's buffer when it is large enough (a search
     that improves at every move notes thousands of partitions) */
  int *part = st->cands[at].part, cap = part ? st->cands[at].cap : 0;
  if (cap < n) part = arena_alloc(s->a, sizeof(int) * (size_t)(n ? n : 1)), cap = n;
  n = 0;
  for (int i = 0; i < s->groups.len; i++) {
    const Group *G = &s->groups.data[i];
    if (!G->alive) continue;
    for (int j = 0; j < G->outs.len; j++) part[n++] = G->outs.data[j]->id;
    part[n++] = -1;
  }
  st->cands[at] = (SearchCand){cost, kernels, "", part, n, cap};
  snprintf(st->cands[at].what, sizeof st->cands[at].what, "%s", what);
  while (at > 0 && st->cands[at - 1].cost > st->cands[at].cost) {
    SearchCand t = st->cands[at];
    st->cands[at] = st->cands[at - 1];
    st->cands[--at] = t;
  }
}

static void group_remove(S *s, const Node *n) {
  int gi = s->group_of[n->id];
  if (gi < 0) return;
  Group *G = &s->groups.data[gi];
  for (int i = 0; i < G->outs.len; i++)
    if (G->outs.data[i] == n) {
      memmove(&G->outs.data[i], &G->outs.data[i + 1], sizeof(Node *) * (size_t)(G->outs.len - i - 1));
      G->outs.len--;
      break;
    }
  if (!G->outs.len) G->alive = false;
  s->group_of[n->id] = -1;
}

static void group_add(S *s, int gi, const Node *n) {
  Group *G = &s->groups.data[gi];
  /* keep outs in id order */
  int at = G->outs.len;
  vec_push(s->a, &G->outs, n);
  while (at > 0 && G->outs.data[at - 1]->id > n->id) {
    G->outs.data[at] = G->outs.data[at - 1];
    at--;
  }
  G->outs.data[at] = n;
  G->alive = true;
  s->group_of[n->id] = gi;
}

static int group_new(S *s, const Node *n) {
  Group G = {0};
  vec_push(s->a, &s->groups, G);
  int gi = s->groups.len - 1;
  group_add(s, gi, n);
  return gi;
}

/* The stored producers a cut at n absorbs: those all of whose readers are
   in n's cone (below n through nodes no one stores) or were absorbed,
   transitively, each with its breadth-first level.  no_pp: refuse a product
   whose result is (through layout nodes) another product's operand. */
static bool feeds_product(const Node *x, const int *const *users, const int *nusers, const Graph *g, int depth) {
  for (int u = 0; u < nusers[x->id]; u++) {
    const Node *y = g->nodes[users[x->id][u]];
    if (is_product(y)) return true;
    if (op_info[y->op].cls == OPC_LAYOUT && depth < 8 && feeds_product(y, users, nusers, g, depth + 1)) return true;
  }
  return false;
}

/* Does n reach a product's operand through elementwise nodes no kernel
   stores (so a product kernel computes it on the way into its operand)? */
static bool operand_chain(const S *s, const Node *n, int *const *users, const int *nusers, int depth) {
  for (int u = 0; u < nusers[n->id]; u++) {
    const Node *y = s->g->nodes[users[n->id][u]];
    if (is_product(y)) return true;
    if (depth < 1 && s->group_of[y->id] < 0 && y != s->g->output && elementwise(y) &&
        operand_chain(s, y, users, nusers, depth + 1))
      return true;
  }
  return false;
}

/* Is x in memory under the current partition: an input, a stored node,
   or a layout view (or a constant) of those? */
static bool in_memory(const S *s, const Node *x, int depth) {
  if (x->op == OP_INPUT || x->op == OP_CONST || s->group_of[x->id] >= 0) return true;
  if (op_info[x->op].cls != OPC_LAYOUT || depth > 4) return false;
  for (int i = 0; i < x->nin; i++)
    if (!in_memory(s, x->in[i], depth + 1)) return false;
  return true;
}

/* The store-alone move's candidates: a computation (not a layout view)
   of tensors in memory that a product computes on the way into its
   operand */
static bool store_alone(const S *s, const Node *n, int *const *users, const int *nusers) {
  if (op_info[n->op].cls == OPC_LAYOUT || !operand_chain(s, n, users, nusers, 0)) return false;
  for (int i = 0; i < n->nin; i++)
    if (!in_memory(s, n->in[i], 0)) return false;
  return true;
}

/* Per-node flags for one walk of a move, zeroed (one buffer per walk
   kind, kept for the search: a move used to allocate fresh ones, and a
   deep model's search made thousands of moves over thousands of nodes) */
static bool *zeroed(S *s, int which) {
  if (!s->flags[which]) s->flags[which] = arena_alloc(s->a, sizeof(bool) * (size_t)(s->nn ? s->nn : 1));
  memset(s->flags[which], 0, sizeof(bool) * (size_t)s->nn);
  return s->flags[which];
}

static int cut_cone(S *s, const Node *n, int *const *users, const int *nusers, bool no_pp, int *producers, int *level,
                    int *nlevels) {
  const Graph *g = s->g;
  bool *in = zeroed(s, 0), *next = zeroed(s, 1);
  in[n->id] = true;
  int np = 0, nlev = 0;
  for (bool grew = true; grew && np < 16; nlev++) {
    grew = false;
    for (int q = n->id; q >= 0; q--) {
      if (!in[q]) continue;
      const Node *m = g->nodes[q];
      for (int kk = 0; kk < m->nin; kk++) {
        const Node *x = m->in[kk];
        if (in[x->id] || next[x->id] || op_info[x->op].cls == OPC_LEAF || x->op == OP_INPUT) continue;
        if (s->group_of[x->id] < 0) {
          in[x->id] = true; /* the cone itself: recomputed here */
          continue;
        }
        if (x == g->output || np >= 16) continue;
        if (no_pp && is_product(x) && feeds_product(x, (const int *const *)users, nusers, g, 0)) continue;
        bool all_in = true;
        for (int u = 0; u < nusers[x->id]; u++) all_in &= in[users[x->id][u]];
        if (!all_in) continue;
        next[x->id] = true;
        level[np] = nlev;
        producers[np++] = x->id;
        grew = true;
      }
    }
    for (int q = 0; q < np; q++) in[producers[q]] = true;
  }
  *nlevels = nlev;
  return np;
}


/* The groups whose kernels read n (walking up from n through nodes no one stores). */
static int readers(S *s, const Node *n, const int *const *users, const int *nusers, int *out, int max) {
  int cnt = 0;
  const Node *stack[4096];
  int sp = 0;
  bool *seen = zeroed(s, 2);
  stack[sp++] = n;
  while (sp) {
    const Node *m = stack[--sp];
    for (int u = 0; u < nusers[m->id]; u++) {
      const Node *c = s->g->nodes[users[m->id][u]];
      if (seen[c->id]) continue;
      seen[c->id] = true;
      int gi = s->group_of[c->id];
      if (gi >= 0) {
        bool dup = false;
        for (int i = 0; i < cnt; i++) dup |= out[i] == gi;
        if (!dup && cnt < max) out[cnt++] = gi;
      } else if (sp < 4096) {
        stack[sp++] = c;
      }
    }
  }
  return cnt;
}

/* cheap to recompute in every reader: elementwise and layout ops */
/* The plan as the state now stands, priced as a move's candidate: counted,
   traced (TS_SEARCH_TRACE) and kept among the runners-up under `what`. */
static double priced_move(S *s, double cur, const char *fmt, ...) TS_PRINTF(3, 4);
static double priced_move(S *s, double cur, const char *fmt, ...) {
  bool ok;
  double t = plan_cost(s, &ok);
  s->stats->moves_tried++;
  char what[120];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (getenv("TS_SEARCH_TRACE")) fprintf(stderr, "%s: %g -> %g\n", what, cur, t);
  note_cand(s, t, what);
  return t;
}

/* A move priced at t, cheaper than *cur, stays taken. */
static void take_move(S *s, double *cur, double t, const Node *n, bool *improved) {
  *cur = t;
  *improved = true;
  s->stats->moves_taken++;
  vec_push(s->a, &s->stats->fused, n);
}

/* The compound move after fusing product p (already out of its group) into
   its reader did not pay: each operand of p that is computed on the way
   (an elementwise node no kernel stores, below layout views) is stored
   too, with the stored products it alone reads fused into its kernel (a
   row scale applied in the projection's epilogue), so that the reader
   loads p's operands as they are.  FlashAttention inside a stacked
   transformer layer needs q and k stored in one step: each alone costs a
   store and gains nothing.  Keeps the state if the plan is cheaper than
   cur (returning its price), else restores it (returning INFINITY). */
static double fuse_with_operands(S *s, const Node *p, double cur, int *const *users, const int *nusers) {
  const Node *ops[4];
  int nops = 0;
  for (int i = 0; i < p->nin && i < 4; i++) {
    const Node *m = p->in[i];
    while (s->group_of[m->id] < 0 && op_info[m->op].cls == OPC_LAYOUT && m->nin == 1) m = m->in[0];
    if (s->group_of[m->id] >= 0 || m->op == OP_INPUT || m->op == OP_CONST || !elementwise(m) ||
        op_info[m->op].cls == OPC_LAYOUT)
      continue;
    bool dup = false;
    for (int q = 0; q < nops; q++) dup |= ops[q] == m;
    if (!dup) ops[nops++] = m;
  }
  if (!nops) return INFINITY;
  int newg[4], absorbed[8], oldg[8], nabs = 0;
  for (int q = 0; q < nops; q++) {
    newg[q] = group_new(s, ops[q]);
    for (int i = 0; i < ops[q]->nin && nabs < 8; i++) {
      const Node *x = ops[q]->in[i];
      int rd[2];
      if (s->group_of[x->id] < 0 || !is_product(x) || readers(s, x, (const int *const *)users, nusers, rd, 2) != 1)
        continue;
      oldg[nabs] = s->group_of[x->id];
      absorbed[nabs++] = x->id;
      group_remove(s, x);
    }
  }
  double t = priced_move(s, cur, "after fusing %%%d (%s) into its reader with its %d operand%s stored", p->id,
                         op_info[p->op].name, nops, nops == 1 ? "" : "s");
  if (t < cur * (1 - 1e-9)) return t;
  for (int i = 0; i < nabs; i++) group_add(s, oldg[i], s->g->nodes[absorbed[i]]);
  for (int q = 0; q < nops; q++) {
    group_remove(s, ops[q]);
    s->groups.data[newg[q]].alive = false;
  }
  return INFINITY;
}

/* Does group gi read only nodes stored by groups that run before position
   `before` (the smallest output id of a group orders the kernels), walking
   down from its outputs through nodes no one stores? */
static bool reads_before(S *s, int gi, int before) {
  const Group *G = &s->groups.data[gi];
  const Node *stack[4096];
  int sp = 0;
  bool *seen = zeroed(s, 3);
  for (int i = 0; i < G->outs.len && sp < 4096; i++) stack[sp++] = G->outs.data[i];
  while (sp) {
    const Node *m = stack[--sp];
    for (int k = 0; k < m->nin; k++) {
      const Node *x = m->in[k];
      if (seen[x->id]) continue;
      seen[x->id] = true;
      int xg = s->group_of[x->id];
      if (xg == gi || xg < 0) {
        if (sp < 4096) stack[sp++] = x;
        else return false;
      } else if (s->groups.data[xg].outs.data[0]->id >= before) {
        return false;
      }
    }
  }
  return true;
}

/* A reduction stored for several kernels: compute it in one reader's
   kernel instead, still stored there for the others.  A row's max read by
   the kernel that sums exp(x - max) and by the one that divides becomes a
   running max beside the sum (one pass over the row, its partial states
   merged across blocks when the row is split), and the divider loads both.
   Each reader is tried whose kernel may run where n's did (it reads
   nothing stored later); the cheapest that beats *cur is kept (true). */
static bool join_reader(S *s, const Node *n, const int *rd, int nr, double *cur) {
  int gi = s->group_of[n->id], best = -1;
  double best_t = *cur * (1 - 1e-9);
  for (int r = 0; r < nr; r++) {
    group_remove(s, n);
    group_add(s, rd[r], n);
    if (reads_before(s, rd[r], n->id + 1)) {
      double t = priced_move(s, *cur, "after computing %%%d (%s) in a reader's kernel, stored there", n->id,
                             op_info[n->op].name);
      if (t < best_t) best_t = t, best = rd[r];
    }
    group_remove(s, n);
    group_add(s, gi, n);
  }
  if (best < 0) return false;
  group_remove(s, n);
  group_add(s, best, n);
  *cur = best_t;
  return true;
}

/* A product stored for several kernels (the scores, read by the kernel of
   a row's statistics and by the one of P⬝V): stop storing it and merge its
   readers into one kernel (into the reader group of highest index;
   order_groups then runs it after everything it reads), which computes it.  Greedy
   single moves cannot get there when each step alone costs more (a row's
   sum moved beside P⬝V still reads the stored scores).  Where the joined
   kernel cannot compute the product's operands on the way (a row scale
   before a reshape into heads), they are stored too (fuse_with_operands).
   Kept if the plan is cheaper than *cur (true); else the state is
   restored. */
static bool fuse_joining_readers(S *s, const Node *n, const int *rd, int nr, double *cur, int *const *users,
                                 const int *nusers) {
  if (nr < 2 || nr > 4 || !is_product(n)) return false;
  /* only where a reader keeps a row's statistics of it (a reduction): a
     join of product kernels alone (a backward pass's gradients) gave
     TileLang kernels it could not lay out at small sizes */
  bool stats = false;
  for (int r = 0; r < nr; r++)
    for (int i = 0; i < s->groups.data[rd[r]].outs.len; i++)
      stats |= op_info[s->groups.data[rd[r]].outs.data[i]->op].cls == OPC_REDUCE;
  if (!stats) return false;
  int target = rd[0];
  for (int r = 1; r < nr; r++) if (rd[r] > target) target = rd[r];
  const Node *moved[64];
  int from[64], nm = 0, gi = s->group_of[n->id];
  for (int r = 0; r < nr; r++) {
    if (rd[r] == target) continue;
    Group *G = &s->groups.data[rd[r]];
    while (G->outs.len && nm < 64) {
      const Node *m = G->outs.data[0];
      from[nm] = rd[r], moved[nm++] = m;
      group_remove(s, m);
      group_add(s, target, m);
    }
  }
  group_remove(s, n);
  double t = priced_move(s, *cur, "after fusing %%%d (%s) into its %d readers, joined", n->id, op_info[n->op].name, nr);
  if (isinf(t)) t = fuse_with_operands(s, n, *cur, users, nusers);
  if (t < *cur * (1 - 1e-9)) {
    *cur = t;
    return true;
  }
  group_add(s, gi, n);
  for (int i = nm - 1; i >= 0; i--) {
    group_remove(s, moved[i]);
    group_add(s, from[i], moved[i]);
  }
  return false;
}

/* A kernel whose stored nodes are all read by one other kernel (layer
   norm's row sum and rstd, both read by the product's kernel after the
   mean is pulled out of the product): stop storing them all at once, so
   that kernel computes them.  No single fuse pays: with the rstd moved
   over, the sum still needs a kernel of its own reading every row.  Kept
   if the plan is cheaper than *cur (true); else the state is restored. */
static bool dissolve_group(S *s, int gi, double *cur, int *const *users, const int *nusers) {
  Group *G = &s->groups.data[gi];
  int n = G->outs.len, target = -1;
  if (n < 2 || n > 16) return false;
  for (int i = 0; i < n; i++) {
    const Node *m = G->outs.data[i];
    if (m == s->g->output) return false;
    int rd[8];
    int nr = readers(s, m, (const int *const *)users, nusers, rd, 8);
    for (int r = 0; r < nr; r++) {
      if (rd[r] == gi) continue;
      if (target >= 0 && rd[r] != target) return false;
      target = rd[r];
    }
  }
  if (target < 0) return false;
  const Node *moved[16];
  for (int i = 0; i < n; i++) moved[i] = G->outs.data[0], group_remove(s, moved[i]);
  double t = priced_move(s, *cur, "after fusing the %d values %%%d.. stores into their one reader", n, moved[0]->id);
  if (t < *cur * (1 - 1e-9)) {
    *cur = t;
    return true;
  }
  for (int i = 0; i < n; i++) group_add(s, gi, moved[i]);
  return false;
}

Plan *plan_search(Graph *g, DType dt, const SearchOpts *o, SearchStats *stats) {
  SearchStats local;
  if (!stats) stats = &local;
  memset(stats, 0, sizeof *stats);
  S s = {.g = g, .a = g->ctx->arena, .dt = dt, .o = o, .stats = stats, .nn = g->nnodes, .t0 = ts_seconds(),
         .cpu0 = ts_cpu_seconds(), .scratch = arena_new(), .lowering = arena_new()};
  s.gpu = o && o->gpu ? o->gpu : gpu_get(GPU_H200);
  s.group_of = arena_alloc(s.a, sizeof(int) * (size_t)s.nn);
  for (int i = 0; i < s.nn; i++) s.group_of[i] = -1;
  s.uses = tile_use_counts(g);
  int **users = arena_alloc(s.a, sizeof(int *) * (size_t)s.nn);
  int *nusers = arena_alloc(s.a, sizeof(int) * (size_t)s.nn);
  for (int i = 0; i < s.nn; i++) users[i] = arena_alloc(s.a, sizeof(int) * (size_t)(s.uses[i] ? s.uses[i] : 1));
  for (int i = 0; i < s.nn; i++)
    for (int k = 0; k < g->nodes[i]->nin; k++) {
      int x = g->nodes[i]->in[k]->id;
      users[x][nusers[x]++] = i;
    }
  /* the naive partition */
  for (int i = 0; i < s.nn; i++) {
    const Node *n = g->nodes[i];
    if (n == g->output || tile_materialized(g, s.uses, n)) {
      if (n->op == OP_INPUT && n != g->output) continue; /* an output that is an input is copied */
      group_new(&s, n);
    }
  }
  bool ok;
  double cur = plan_cost(&s, &ok);
  stats->naive_cost = cur;
  note_cand(&s, cur, "the naive partition (each reduction, product and shared value stored)");
  int max_sweeps = o && o->max_sweeps ? o->max_sweeps : 20;
  double limit = o && o->seconds > 0 ? o->seconds : SEARCH_SECONDS;
  int budget = o && o->budget > 0 ? o->budget : SEARCH_BUDGET;
  stats->stop = STOP_SATURATED;
  for (int sweep = 0; sweep < max_sweeps; sweep++) {
    bool improved = false;
    stats->sweeps++;
    for (int i = s.nn - 1; i >= 0; i--) {
      if (stats->kernels_priced >= budget || ts_cpu_seconds() - s.cpu0 > limit) {
        stats->stop = stats->kernels_priced >= budget ? STOP_BUDGET : STOP_TIME;
        goto done;
      }
      const Node *n = g->nodes[i];
      if (n == g->output) continue;
      int gi = s.group_of[i];
      bool alone = false; /* n is a candidate of the store-alone move */
      if (gi >= 0) {
        /* fuse n into the one kernel that reads it */
        int rd[8];
        int nr = readers(&s, n, (const int *const *)users, nusers, rd, 8);
        if (nr > 1 && op_info[n->op].cls == OPC_REDUCE && s.groups.data[gi].outs.len == 1 &&
            join_reader(&s, n, rd, nr, &cur)) {
          take_move(&s, &cur, cur, n, &improved);
          continue;
        }
        if (nr > 1 && fuse_joining_readers(&s, n, rd, nr, &cur, users, nusers)) {
          take_move(&s, &cur, cur, n, &improved);
          continue;
        }
        if (nr != 1 && !(nr > 1 && elementwise(n))) continue;
        group_remove(&s, n);
        double t = priced_move(&s, cur, "after fusing %%%d (%s) into its reader", n->id, op_info[n->op].name);
        if (t < cur * (1 - 1e-9) ||
            (is_product(n) && isinf(t) && (t = fuse_with_operands(&s, n, cur, users, nusers)) < cur * (1 - 1e-9))) {
          take_move(&s, &cur, t, n, &improved);
        } else {
          group_add(&s, gi, n);
          if (dissolve_group(&s, gi, &cur, users, nusers)) take_move(&s, &cur, cur, n, &improved);
        }
      } else if (elementwise(n) && ((alone = store_alone(&s, n, users, nusers)) || s.uses[i] == 1)) {
        /* cut: store n, and absorb into its kernel every stored node all of
           whose readers are in the kernel (n's cone and what was absorbed),
           transitively: the cone collapses into one kernel */
        int producers[16], level[16], np = 0, nlev = 0;
        int vp[2][16], vl[2][16], vn[2], vlev[2];
        for (int v = 0; v < 2; v++) /* (a node read twice is stored alone or not at all) */
          vn[v] = s.uses[i] == 1 ? cut_cone(&s, n, users, nusers, v == 1, vp[v], vl[v], &vlev[v]) : 0;
        /* absorb level by level, with and without products that feed a
           product directly (one kernel cannot compute both): the cheapest */
        int saved[16], best_lev = -1, best_v = 0, ng = -1;
        double best_t = INFINITY;
        /* an operand a product reads, stored alone: the product then loads
           it as it is (bulk copies, prefetched) instead of computing it on
           the way in (RMSNorm's gain folded into the weights) */
        if (alone) {
          ng = group_new(&s, n);
          double t = priced_move(&s, cur, "after storing %%%d (%s), a product's operand", n->id, op_info[n->op].name);
          best_t = t, best_lev = -2;
          group_remove(&s, n);
          s.groups.data[ng].alive = false;
        }
        for (int v = 0; v < 2; v++) {
          if (vn[v] < 2 || (v == 1 && vn[1] == vn[0])) continue; /* one producer: a plain fuse does it */
          np = vn[v];
          memcpy(producers, vp[v], sizeof producers);
          memcpy(level, vl[v], sizeof level);
          nlev = vlev[v];
          for (int q = 0; q < np; q++) saved[q] = s.group_of[producers[q]];
          for (int L = 0; L < nlev; L++) {
            int na = 0;
            for (int q = 0; q < np; q++)
              if (level[q] <= L) group_remove(&s, g->nodes[producers[q]]), na++;
            if (na < 2 && L + 1 < nlev) {
              for (int q = 0; q < np; q++)
                if (level[q] <= L) group_add(&s, saved[q], g->nodes[producers[q]]);
              continue;
            }
            ng = group_new(&s, n);
            double t = priced_move(&s, cur, "after storing %%%d (%s) with %d product%s and reduction%s fused in", n->id,
                                   op_info[n->op].name, na, na == 1 ? "" : "s", na == 1 ? "" : "s");
            if (t < best_t) best_t = t, best_lev = L, best_v = v;
            group_remove(&s, n);
            s.groups.data[ng].alive = false;
            for (int q = 0; q < np; q++)
              if (level[q] <= L) group_add(&s, saved[q], g->nodes[producers[q]]);
          }
        }
        np = vn[best_v];
        memcpy(producers, vp[best_v], sizeof producers);
        memcpy(level, vl[best_v], sizeof level);
        if (best_lev != -1 && best_t < cur * (1 - 1e-9)) { /* -2: stored alone, absorbing nothing */
          for (int q = 0; q < np; q++)
            if (level[q] <= best_lev) group_remove(&s, g->nodes[producers[q]]);
          group_new(&s, n);
          take_move(&s, &cur, best_t, n, &improved);
        }
      }
    }
    if (!improved) break;
    if (sweep + 1 == max_sweeps) stats->stop = STOP_SWEEPS;
  }
done:
  arena_free(s.scratch);
  s.scratch = NULL;
  /* the runners-up: every priced plan but the chosen one */
  {
    int w = 0;
    for (int i = 0; i < stats->ncands; i++)
      if (fabs(stats->cands[i].cost - cur) > 1e-12 * cur) stats->cands[w++] = stats->cands[i];
    stats->ncands = w;
  }
  if (getenv("TS_SEARCH_TRACE"))
    for (int i = 0; i < s.nn; i++)
      if (s.group_of[i] >= 0) fprintf(stderr, "stored %%%d in group %d\n", i, s.group_of[i]);
  stats->cost = cur;
  stats->seconds = ts_seconds() - s.t0;
  if (o && o->candidate > 0) {
    /* a runner-up asked for: its partition replaces the chosen one */
    if (o->candidate > stats->ncands) {
      arena_free(s.lowering);
      return NULL;
    }
    const SearchCand *c = &stats->cands[o->candidate - 1];
    for (int i = 0; i < s.groups.len; i++) s.groups.data[i].alive = false;
    for (int i = 0; i < s.nn; i++) s.group_of[i] = -1;
    for (int i = 0; i < c->npart;) {
      int gi = group_new(&s, g->nodes[c->part[i]]);
      for (i++; c->part[i] >= 0; i++) group_add(&s, gi, g->nodes[c->part[i]]);
      i++;
    }
  }
  /* the final plan, configured, in the graph's arena */
  Plan *p = state_plan(&s, false);
  s.final = true;
  for (int i = 0; i < p->kernels.len; i++) {
    PKernel *k = p->kernels.data[i];
    char why[200];
    Arena *home = g->ctx->arena;
    double t = configure(&s, p, k, why, sizeof why);
    (void)home;
    if (getenv("TS_SEARCH_TRACE")) {
      fprintf(stderr, "final kernel %d root %%%d: %g s %s\n", i, k->root->id, t, why);
      for (int a = 0; a < k->naxes; a++)
        fprintf(stderr, "  axis %d: size %lld %s tile %lld%s%s rep %%%d.%d\n", a, (long long)k->ax[a].size,
                axis_role_name(k->ax[a].role), (long long)k->ax[a].tile, k->ax[a].reduced ? " reduced" : "",
                k->ax[a].in_output ? " out" : "", k->axrep[a].node, k->axrep[a].dim);
      for (int m = 0; m < k->members.len; m++) {
        const Node *n = k->members.data[m];
        fprintf(stderr, "  %%%d %s:", n->id, op_info[n->op].name);
        for (int d = 0; d < n->shape.rank; d++) fprintf(stderr, " %d", k->dimax[n->id][d]);
        if (op_info[n->op].cls == OPC_REDUCE || op_info[n->op].cls == OPC_MATMUL) fprintf(stderr, " / red %d", k->redax[n->id]);
        fputc('\n', stderr);
      }
    }
    if (!isfinite(t)) {
      /* not realizable fused: the naive rules (a kernel the naive lowering has) */
      k->naive = k->outs.len == 1 && naive_ok(p, plan_naive_node(k), true);
      snprintf(k->why, sizeof k->why, "%s", why);
      if (k->naive) t = price_naive(&s, p, k);
    }
    k->cost = t;
  }
  arena_free(s.lowering);
  return p;
}
