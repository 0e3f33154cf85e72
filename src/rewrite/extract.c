/*
 * extract.c: choosing a term per class and rebuilding it as a Graph.
 *
 * Costs are computed bottom-up to a fixpoint (greedy extraction): every
 * live e-node whose children all have a cost is offered to the cost
 * function, in id order, and becomes its class's best when it is strictly
 * cheaper; passes repeat until nothing improves.  With costs that are at
 * least each child's (the contract of EgCostFn) the chosen e-nodes form no
 * cycle; a cycle is still guarded against, and so is a pass count beyond the
 * number of classes.  Ties keep the earlier e-node, so the result is
 * deterministic.
 *
 * The term is rebuilt through the ir_* builders in the source graph's
 * context: the inputs first, in the source's order with its names, roles,
 * shapes and provenance, then each chosen e-node after its children with
 * g->cur_site/cur_via (and the builder's position) set from the e-node's
 * provenance.  The builders may simplify further (a permute of a permute,
 * a cast of a real tensor), which never changes a value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "egraph.h"

double eg_default_cost(const EgTerm *t, void **summary) {
  (void)summary;
  double out = (double)shape_numel(&t->at->shape), own = 0;
  switch (op_info[t->op].cls) {
  case OPC_LEAF: own = 0; break;
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT:
  case OPC_GATHER: own = out; break;
  case OPC_REDUCE: own = (double)shape_numel(&eg_facts(t->eg, t->kids[0])->shape); break;
  case OPC_MATMUL: {
    const Shape *a = &eg_facts(t->eg, t->kids[0])->shape;
    own = 2 * out * (double)a->d[a->rank - 1].n;
    break;
  }
  case OPC_LAYOUT:
  case OPC_CONCAT: own = 1e-3 * out; break;
  }
  for (int i = 0; i < t->nin; i++) own += t->kid_cost[i];
  return own;
}

typedef struct Extract {
  EGraph *eg;
  Graph *g;
  double *cost;
  int *best;
  void **summary;
  Node **built;
  char *state;      /* 0 not built, 1 building, 2 built */
  bool *used_rule;
} Extract;

static void choose(Extract *x, EgCostFn fn, void *user) {
  EGraph *eg = x->eg;
  double kc_small[8];
  void *ks_small[8];
  for (int pass = 0; pass <= eg->nclasses + 1; pass++) {
    bool changed = false;
    for (int id = 0; id < eg->nnodes; id++) {
      const ENode *e = &eg->nodes[id];
      if (e->dead) continue;
      double *kc = e->nin <= 8 ? kc_small : arena_alloc(eg->arena, sizeof(double) * (size_t)e->nin);
      void **ks = e->nin <= 8 ? ks_small : arena_alloc(eg->arena, sizeof(void *) * (size_t)e->nin);
      bool ready = true;
      for (int i = 0; i < e->nin && ready; i++) {
        int k = eg_find(eg, e->kids[i]);
        ready = x->best[k] >= 0;
        if (ready) {
          kc[i] = x->cost[k];
          ks[i] = x->summary[k];
        }
      }
      if (!ready) continue;
      int c = eg_find(eg, e->cls);
      EgTerm t = {.eg = eg, .node = id, .op = e->op, .at = &e->at, .nin = e->nin, .kids = e->kids,
                  .facts = &eg->classes[c].f, .kid_cost = kc, .kid_summary = ks, .user = user};
      void *sum = NULL;
      double v = fn(&t, &sum);
      if (x->best[c] < 0 || v < x->cost[c]) {
        x->best[c] = id;
        x->cost[c] = v;
        x->summary[c] = sum;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

/* DAG-aware greedy extraction: a class's cost is its e-node's own cost
   plus the own cost of every class in the union of its children's terms,
   each counted once, so a subterm two parents share is paid for once (a
   tree cost pays for it per use and can prefer a term that computes a
   product twice).  The own cost is the cost function's answer with every
   kid_cost zero; the function must be additive for this.  An e-node whose
   children's terms contain its own class would close a cycle and is not
   offered. */
static void choose_dag(Extract *x, EgCostFn fn, void *user) {
  EGraph *eg = x->eg;
  int nc = eg->nclasses ? eg->nclasses : 1, words = (nc + 63) / 64;
  uint64_t **set = arena_alloc(eg->arena, sizeof(uint64_t *) * (size_t)nc);
  double *own = arena_alloc(eg->arena, sizeof(double) * (size_t)nc);
  uint64_t *u = arena_alloc(eg->arena, sizeof(uint64_t) * (size_t)words);
  double zero[8] = {0};
  void *ks_small[8];
  for (int pass = 0; pass <= nc + 1; pass++) {
    bool changed = false;
    for (int id = 0; id < eg->nnodes; id++) {
      const ENode *e = &eg->nodes[id];
      if (e->dead) continue;
      double *kc = e->nin <= 8 ? zero : arena_alloc(eg->arena, sizeof(double) * (size_t)e->nin);
      void **ks = e->nin <= 8 ? ks_small : arena_alloc(eg->arena, sizeof(void *) * (size_t)e->nin);
      bool ready = true;
      memset(u, 0, sizeof(uint64_t) * (size_t)words);
      for (int i = 0; i < e->nin && ready; i++) {
        int k = eg_find(eg, e->kids[i]);
        ready = x->best[k] >= 0;
        if (!ready) break;
        ks[i] = x->summary[k];
        for (int w = 0; w < words; w++) u[w] |= set[k][w];
      }
      if (!ready) continue;
      int c = eg_find(eg, e->cls);
      if (u[c / 64] >> (c % 64) & 1) continue; /* a cycle */
      EgTerm t = {.eg = eg, .node = id, .op = e->op, .at = &e->at, .nin = e->nin, .kids = e->kids,
                  .facts = &eg->classes[c].f, .kid_cost = kc, .kid_summary = ks, .user = user};
      void *sum = NULL;
      double mine = fn(&t, &sum), v = mine;
      for (int w = 0; w < words; w++)
        for (uint64_t b = u[w]; b; b &= b - 1) v += own[w * 64 + __builtin_ctzll(b)];
      if (x->best[c] < 0 || v < x->cost[c]) {
        if (!set[c]) set[c] = arena_alloc(eg->arena, sizeof(uint64_t) * (size_t)words);
        memcpy(set[c], u, sizeof(uint64_t) * (size_t)words);
        set[c][c / 64] |= (uint64_t)1 << (c % 64);
        x->best[c] = id;
        x->cost[c] = v;
        own[c] = mine;
        x->summary[c] = sum;
        changed = true;
      }
    }
    if (!changed) return;
  }
}

/* The cost of the term the current choice extracts from cls: every class
   it reaches counted once, at its e-node's own cost (the cost function
   asked with zero kid costs and the kids' summaries); false when the
   choice closes a cycle or reaches a class without a term. */
static bool dag_cost(Extract *x, EgCostFn fn, void *user, int cls, double *total) {
  EGraph *eg = x->eg;
  cls = eg_find(eg, cls);
  if (x->state[cls] == 2) return true;
  if (x->state[cls] == 1 || x->best[cls] < 0) return false;
  x->state[cls] = 1;
  const ENode *e = &eg->nodes[x->best[cls]];
  double zero[8] = {0};
  void *ks_small[8];
  double *kc = e->nin <= 8 ? zero : arena_alloc(eg->arena, sizeof(double) * (size_t)e->nin);
  void **ks = e->nin <= 8 ? ks_small : arena_alloc(eg->arena, sizeof(void *) * (size_t)e->nin);
  for (int i = 0; i < e->nin; i++) {
    if (!dag_cost(x, fn, user, e->kids[i], total)) return false;
    ks[i] = x->summary[eg_find(eg, e->kids[i])];
  }
  EgTerm t = {.eg = eg, .node = x->best[cls], .op = e->op, .at = &e->at, .nin = e->nin, .kids = e->kids,
              .facts = &eg->classes[cls].f, .kid_cost = kc, .kid_summary = ks, .user = user};
  void *sum = NULL;
  *total += fn(&t, &sum);
  x->summary[cls] = sum;
  x->state[cls] = 2;
  return true;
}

static double dag_total(Extract *x, EgCostFn fn, void *user, int root) {
  memset(x->state, 0, (size_t)(x->eg->nclasses ? x->eg->nclasses : 1));
  double total = 0;
  return dag_cost(x, fn, user, root, &total) ? total : INFINITY;
}

/* The greedy choice prices each class as if its term were all the program
   shared: a class can pick a term that is cheaper alone but recomputes what
   a sibling computes anyway (c·amax(q kᵀ) beside exp((c q) kᵀ − …) pays for
   two products).  Local search over the whole term fixes that: for each
   class the term reaches, each other e-node of it is tried, and kept when
   the total over the root's term (shared classes once) drops; sweeps repeat
   until none does (at most EXTRACT_SWEEPS).  Deterministic: classes and
   e-nodes in id order, strict improvement only. */
#define EXTRACT_SWEEPS 4

static void refine_dag(Extract *x, EgCostFn fn, void *user, int root) {
  EGraph *eg = x->eg;
  int nc = eg->nclasses ? eg->nclasses : 1;
  double cur = dag_total(x, fn, user, root);
  if (!isfinite(cur)) return;
  int *reach = arena_alloc(eg->arena, sizeof(int) * (size_t)nc);
  for (int sweep = 0; sweep < EXTRACT_SWEEPS; sweep++) {
    int nr = 0;
    for (int c = 0; c < nc; c++)
      if (x->state[c] == 2) reach[nr++] = c;
    bool improved = false;
    for (int r = 0; r < nr; r++) {
      const EClass *ec = &eg->classes[reach[r]];
      for (int j = 0; j < ec->nnodes; j++) {
        int id = ec->nodes[j], old = x->best[reach[r]];
        if (id == old || eg->nodes[id].dead) continue;
        x->best[reach[r]] = id;
        double v = dag_total(x, fn, user, root);
        if (v < cur * (1 - 1e-12)) {
          cur = v;
          improved = true;
        } else {
          x->best[reach[r]] = old;
        }
      }
    }
    dag_total(x, fn, user, root); /* states and summaries of the kept choice */
    if (!improved) break;
  }
}

static Node *build(Extract *x, int cls) {
  EGraph *eg = x->eg;
  Graph *g = x->g;
  cls = eg_find(eg, cls);
  if (x->state[cls] == 2) return x->built[cls];
  if (x->state[cls] == 1 || x->best[cls] < 0)
    ts_fatal(eg->ctx, "internal error: extraction found no acyclic term for e-class %d", cls);
  x->state[cls] = 1;
  const ENode *e = &eg->nodes[x->best[cls]];
  Node *small[4], **k = e->nin <= 4 ? small : arena_alloc(eg->arena, sizeof(Node *) * (size_t)e->nin);
  for (int i = 0; i < e->nin; i++) k[i] = build(x, e->kids[i]);
  if (e->rule >= 0 && e->rule < eg->rule_names.len) x->used_rule[e->rule] = true;
  g->cur_site = e->site;
  g->cur_via = e->via;
  Pos p = e->pos;
  const NodeAttrs *at = &e->at;
  Node *n = NULL;
  switch (e->op) {
  case OP_INPUT: n = g->inputs[e->input_index]; break;
  case OP_CONST: n = at->kind == EK_INT ? ir_const_int(g, (int64_t)at->value, p) : ir_const(g, at->value, p); break;
  case OP_IOTA: n = ir_iota(g, at->shape.d[0].n, at->shape.d[0].sym, p); break;
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
  case OP_CAST: n = ir_unary(g, e->op, k[0], p); break;
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
  case OP_NE: n = ir_binary(g, e->op, k[0], k[1], p); break;
  case OP_SELECT: n = ir_select(g, k[0], k[1], k[2], p); break;
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN: n = ir_reduce(g, e->op, k[0], at->axis, p); break;
  case OP_MATMUL: n = ir_matmul(g, k[0], k[1], p); break;
  case OP_PERMUTE: n = ir_permute(g, k[0], at->perm, at->nperm, p); break;
  case OP_RESHAPE: n = ir_reshape(g, k[0], &at->shape, p); break;
  case OP_SLICE: n = ir_slice(g, k[0], at->axis, at->lo, at->hi, p); break;
  case OP_CONCAT: n = ir_concat(g, k, e->nin, at->axis, p); break;
  case OP_GATHER: n = ir_gather(g, k[0], k[1], at->axis, p); break;
  case OP_COUNT: break;
  }
  if (!n) ts_fatal(eg->ctx, "internal error: e-node %d has no op", x->best[cls]);
  x->built[cls] = n;
  x->state[cls] = 2;
  return n;
}

static Graph *extract(EGraph *eg, int root, EgCostFn cost, void *user, bool dag, const char *const **rules_used,
                      int *nused) {
  if (eg->dirty) eg_rebuild(eg);
  int nc = eg->nclasses ? eg->nclasses : 1;
  Extract x = {.eg = eg};
  x.cost = arena_alloc(eg->arena, sizeof(double) * (size_t)nc);
  x.best = arena_alloc(eg->arena, sizeof(int) * (size_t)nc);
  x.summary = arena_alloc(eg->arena, sizeof(void *) * (size_t)nc);
  x.built = arena_alloc(eg->arena, sizeof(Node *) * (size_t)nc);
  x.state = arena_alloc(eg->arena, (size_t)nc);
  int nr = eg->rule_names.len;
  x.used_rule = arena_alloc(eg->arena, (size_t)(nr ? nr : 1));
  for (int c = 0; c < nc; c++) x.best[c] = -1;
  if (dag) {
    choose_dag(&x, cost ? cost : eg_default_cost, user);
    if (!isfinite(dag_total(&x, cost ? cost : eg_default_cost, user, root))) {
      /* a class took a cheaper term after a parent had chosen it, and the
         new term reaches the parent (masked soft-capped attention's
         gradient): start the local search from the tree choice instead,
         acyclic at its fixpoint (no e-node costs less than its children,
         and a class changes its term only for a strictly cheaper one) */
      for (int c = 0; c < nc; c++) x.best[c] = -1;
      choose(&x, cost ? cost : eg_default_cost, user);
    }
    refine_dag(&x, cost ? cost : eg_default_cost, user, root);
    memset(x.state, 0, (size_t)nc);
  } else {
    choose(&x, cost ? cost : eg_default_cost, user);
  }
  const Graph *src = eg->src;
  Graph *g = x.g = graph_new(eg->ctx);
  g->entry = src->entry;
  g->entry_pos = src->entry_pos;
  for (int i = 0; i < src->ninputs; i++) {
    const Node *in = src->inputs[i];
    g->cur_site = in->site;
    g->cur_via = in->via;
    ir_input(g, in->name, in->role, &in->shape, in->pos);
  }
  g->output = build(&x, root);
  g->cur_site = (Pos){0};
  g->cur_via = NULL;
  if (rules_used) {
    const char **names = arena_alloc(eg->ctx->arena, sizeof(char *) * (size_t)(nr + 1));
    int n = 0;
    for (int i = 0; i < nr; i++)
      if (x.used_rule[i]) names[n++] = eg->rule_names.data[i];
    *rules_used = names;
    if (nused) *nused = n;
  } else if (nused) {
    int n = 0;
    for (int i = 0; i < nr; i++) n += x.used_rule[i];
    *nused = n;
  }
  return g;
}

Graph *eg_extract(EGraph *eg, int root, EgCostFn cost, void *user, const char *const **rules_used, int *nused) {
  return extract(eg, root, cost, user, false, rules_used, nused);
}

Graph *eg_extract_dag(EGraph *eg, int root, EgCostFn cost, void *user, const char *const **rules_used, int *nused) {
  return extract(eg, root, cost, user, true, rules_used, nused);
}
