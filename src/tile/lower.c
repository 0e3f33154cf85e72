/*
 * lower.c: the naive lowering of a graph to a tile program.
 *
 * A node is materialized (given a global tensor and a kernel of its own)
 * when it is a reduction, a matrix product, the output, or has more than
 * one user; graph inputs are global tensors already.  Every other node is
 * inlined: its users read it through a pointwise expression, so a chain of
 * elementwise and layout ops (broadcasts, permutes, reshapes, slices,
 * concatenations, gathers) becomes one expression evaluated at each output
 * element.  Three kernel shapes follow:
 *
 *   map      the output viewed as [rows, cols] (cols = last dimension),
 *            a grid of [BR, BC] tiles, each element stored straight from
 *            its expression;
 *   reduce   one row per output element and the reduced axis as columns:
 *            a grid over row tiles, a loop over [BR, BK] tiles of the axis
 *            (masked tails read the identity), T.reduce into an f32
 *            accumulator, then a store;
 *   matmul   a grid over [BM, BN] output tiles and the flattened batch,
 *            a pipelined loop over K tiles loading both operands (their
 *            expressions, so a transpose is read in place) into shared
 *            memory in the storage type, T.gemm into an f32 accumulator.
 *
 * Indices that could leave a tensor (the unused side of a concatenation, a
 * gather's data-dependent index) are clamped into range, so every load is
 * in bounds whatever the evaluation order of a target's select.
 */
#include <stdlib.h>
#include <string.h>

#include "tile.h"

typedef struct Lower {
  Arena *a;
  Graph *g;
  TileProgram *tp;
  int *uses;
  Kernel *k;            /* the kernel being built */
} Lower;

static int64_t pow2ceil(int64_t v) {
  int64_t p = 1;
  while (p < v && p < ((int64_t)1 << 40)) p *= 2;
  return p;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static SExpr *I(Lower *L, int64_t v) { return sx_int(L->a, v); }
static SExpr *V(Lower *L, TVar v) { return sx_var(L->a, v); }
static SExpr *ADD(Lower *L, SExpr *x, SExpr *y) { return sx_idx(L->a, IX_ADD, x, y); }
static SExpr *MUL(Lower *L, SExpr *x, SExpr *y) { return sx_idx(L->a, IX_MUL, x, y); }
static SExpr *LT(Lower *L, SExpr *x, SExpr *y) { return sx_idx(L->a, IX_LT, x, y); }
static SExpr *AND(Lower *L, SExpr *x, SExpr *y) { return sx_idx(L->a, IX_AND, x, y); }

static bool materialized(const Lower *L, const Node *n) {
  if (n == L->g->output) return true;
  switch (op_info[n->op].cls) {
  case OPC_LEAF: return n->op == OP_INPUT;
  case OPC_REDUCE:
  case OPC_MATMUL: return true;
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT:
  case OPC_LAYOUT:
  case OPC_CONCAT:
  case OPC_GATHER: return L->uses[n->id] > 1;
  }
  return true;
}

static void unflatten(Lower *L, SExpr *flat, const Shape *s, int r, SExpr **out) {
  tile_unflatten(L->a, flat, s, r, out);
}

static void broadcast_index(Lower *L, const Shape *op, const Shape *out, SExpr **idx, SExpr **res) {
  tile_broadcast_index(op, out, idx, res, L->a);
}

static void cover(Lower *L, const Node *n) { tile_cover(L->a, L->k, n); }

/* The value of node n at index idx (pointwise.c); top: expand n itself. */
static SExpr *pointwise(Lower *L, const Node *n, SExpr **idx, bool top) {
  Pw p = {.a = L->a, .tp = L->tp, .k = L->k};
  SExpr *e = tile_pointwise(&p, n, idx, top);
  if (p.failed) {
    /* the naive lowering materializes every reduction and product */
    fprintf(stderr, "tilesmith: internal error: cannot inline %s\n", op_info[p.failed->op].name);
    abort();
  }
  return e;
}

static Kernel *new_kernel(Lower *L, const Node *n, KernelKind kind) {
  Kernel *k = arena_alloc(L->a, sizeof *k);
  k->name = arena_printf(L->a, "k%d_%s", L->tp->kernels.len, op_info[n->op].name);
  k->kind = kind;
  k->grid[0] = k->grid[1] = k->grid[2] = 1;
  k->threads = 128;
  k->node = n;
  vec_push(L->a, &L->tp->kernels, k);
  L->k = k;
  return k;
}

static TBuf *tile_buf(Lower *L, const char *name, Scope scope, DType dt, int64_t r, int64_t c) {
  TBuf *b = arena_alloc(L->a, sizeof *b);
  b->id = L->k->bufs.len;
  b->name = name;
  b->scope = scope;
  b->dtype = dt;
  b->shape.rank = c ? 2 : 1;
  b->shape.d[0].n = r;
  if (c) b->shape.d[1].n = c;
  vec_push(L->a, &L->k->bufs, b);
  return b;
}

static Stmt *stmt(Lower *L, StmtList *list, StmtKind kind) {
  Stmt *s = arena_alloc(L->a, sizeof *s);
  s->kind = kind;
  vec_push(L->a, list, s);
  return s;
}

/* `for k in [0, trips)` appended to the kernel's top level */
static Stmt *loop_stmt(Lower *L, int64_t trips, int stages) {
  Stmt *lp = stmt(L, &L->k->body, ST_LOOP);
  lp->var = TV_K;
  lp->lo = I(L, 0);
  lp->hi = I(L, trips);
  lp->stages = stages;
  return lp;
}

static void store_to(Lower *L, Stmt *s, const Node *n, SExpr **gidx) {
  s->global = L->tp->of_node[n->id];
  s->ngidx = n->shape.rank;
  s->gidx = arena_alloc(L->a, sizeof(SExpr *) * (size_t)(s->ngidx ? s->ngidx : 1));
  memcpy(s->gidx, gidx, sizeof(SExpr *) * (size_t)s->ngidx);
}

/* map kernel: the output as [rows, cols], element by element */
static void lower_map(Lower *L, const Node *n) {
  const Shape *s = &n->shape;
  int r = s->rank;
  int64_t C = r ? s->d[r - 1].n : 1, R = C ? shape_numel(s) / C : 0;
  int64_t BC = clamp64(pow2ceil(C), 1, 128), BR = clamp64(2048 / BC, 1, pow2ceil(R));
  Kernel *k = new_kernel(L, n, KERNEL_MAP);
  k->grid[0] = ceil_div(C, BC);
  k->grid[1] = ceil_div(R, BR);
  SExpr *row = ADD(L, MUL(L, V(L, TV_BY), I(L, BR)), V(L, TV_I));
  SExpr *col = ADD(L, MUL(L, V(L, TV_BX), I(L, BC)), V(L, TV_J));
  SExpr *idx[TS_MAX_RANK];
  if (r) {
    unflatten(L, row, s, r - 1, idx);
    idx[r - 1] = col;
  }
  Stmt *st = stmt(L, &k->body, ST_STORE);
  store_to(L, st, n, idx);
  st->value = pointwise(L, n, idx, true);
  st->mask = AND(L, LT(L, row, I(L, R)), LT(L, col, I(L, C)));
  st->ext[0] = BR;
  st->ext[1] = BC;
}

/* reduce kernel: one row per output element, the axis in column tiles */
static void lower_reduce(Lower *L, const Node *n) {
  const Node *x = n->in[0];
  int ax = n->axis, r = n->shape.rank;
  int64_t R = shape_numel(&n->shape), K = x->shape.d[ax].n;
  int64_t BK = clamp64(pow2ceil(K), 1, 128), BR = clamp64(pow2ceil(R), 1, 16);
  Kernel *k = new_kernel(L, n, KERNEL_REDUCE);
  k->grid[0] = ceil_div(R, BR);
  int64_t trips = ceil_div(K, BK);
  TBuf *tile = tile_buf(L, "tile", SCOPE_FRAGMENT, DT_F32, BR, BK);
  TBuf *acc = tile_buf(L, "acc", SCOPE_FRAGMENT, DT_F32, BR, 0);
  tile->node = x;
  Stmt *f = stmt(L, &k->body, ST_FILL);
  f->dst = acc;
  f->value = sx_real(L->a, op_monoid(n->op)->identity);
  SExpr *row = ADD(L, MUL(L, V(L, TV_BX), I(L, BR)), V(L, TV_I));
  SExpr *kk = ADD(L, MUL(L, V(L, TV_K), I(L, BK)), V(L, TV_J));
  SExpr *oidx[TS_MAX_RANK], *xidx[TS_MAX_RANK];
  unflatten(L, row, &n->shape, r, oidx);
  memcpy(xidx, oidx, sizeof(SExpr *) * (size_t)r);
  xidx[ax] = kk;
  cover(L, n);
  if (trips) { /* an empty axis leaves the accumulator at the identity */
    Stmt *lp = loop_stmt(L, trips, 1);
    Stmt *m = stmt(L, &lp->body, ST_MAP);
    m->dst = tile;
    m->value = pointwise(L, x, xidx, false);
    m->mask = AND(L, LT(L, row, I(L, R)), LT(L, kk, I(L, K)));
    m->other = sx_real(L->a, op_monoid(n->op)->identity);
    Stmt *red = stmt(L, &lp->body, ST_REDUCE);
    red->dst = acc;
    red->a = tile;
    red->reduce_op = n->op;
    red->clear = false;
  }
  Stmt *st = stmt(L, &k->body, ST_STORE);
  store_to(L, st, n, oidx);
  st->value = sx_tile(L->a, acc, V(L, TV_I), NULL);
  st->mask = LT(L, row, I(L, R));
  st->ext[0] = BR;
  st->ext[1] = 1;
}

/* A gemm operand's tile: dst[i, j] = x[batch..., row, col] (x broadcast to
   the batch axes of n), zero where row >= nrows or col >= ncols. */
static void load_operand_tile(Lower *L, StmtList *list, TBuf *dst, const Node *x, const Node *n, SExpr **bidx,
                              int nb, SExpr *row, int64_t nrows, SExpr *col, int64_t ncols) {
  SExpr *full[TS_MAX_RANK], *sub[TS_MAX_RANK];
  memcpy(full, bidx, sizeof(SExpr *) * (size_t)nb);
  full[nb] = row;
  full[nb + 1] = col;
  broadcast_index(L, &x->shape, &n->shape, full, sub);
  Stmt *ld = stmt(L, list, ST_MAP);
  ld->dst = dst;
  ld->value = pointwise(L, x, sub, false);
  ld->mask = AND(L, LT(L, row, I(L, nrows)), LT(L, col, I(L, ncols)));
  ld->other = sx_real(L->a, 0);
}

/* matmul kernel: [BM, BN] output tiles, a pipelined loop over K */
static void lower_matmul(Lower *L, const Node *n) {
  const Node *a = n->in[0], *b = n->in[1];
  int r = n->shape.rank, nb = r - 2;
  int64_t M = n->shape.d[r - 2].n, N = n->shape.d[r - 1].n, K = a->shape.d[a->shape.rank - 1].n;
  int64_t BM = 64, BN = 64, BK = 32, batch = 1;
  for (int d = 0; d < nb; d++) batch *= n->shape.d[d].n;
  Kernel *k = new_kernel(L, n, KERNEL_MATMUL);
  k->grid[0] = ceil_div(N, BN);
  k->grid[1] = ceil_div(M, BM);
  k->grid[2] = batch;
  int64_t trips = ceil_div(K, BK);
  DType st_dt = L->tp->dtype;
  TBuf *As = tile_buf(L, "A_tile", SCOPE_SHARED, st_dt, BM, BK);
  TBuf *Bs = tile_buf(L, "B_tile", SCOPE_SHARED, st_dt, BK, BN);
  TBuf *Cf = tile_buf(L, "C_acc", SCOPE_FRAGMENT, DT_F32, BM, BN);
  As->node = a;
  Bs->node = b;
  Stmt *f = stmt(L, &k->body, ST_FILL);
  f->dst = Cf;
  f->value = sx_real(L->a, 0);
  SExpr *bidx[TS_MAX_RANK], *full[TS_MAX_RANK];
  unflatten(L, V(L, TV_BZ), &n->shape, nb, bidx);
  SExpr *m = ADD(L, MUL(L, V(L, TV_BY), I(L, BM)), V(L, TV_I));
  SExpr *ka = ADD(L, MUL(L, V(L, TV_K), I(L, BK)), V(L, TV_J));
  SExpr *kb = ADD(L, MUL(L, V(L, TV_K), I(L, BK)), V(L, TV_I));
  SExpr *col = ADD(L, MUL(L, V(L, TV_BX), I(L, BN)), V(L, TV_J));
  if (trips) { /* an empty contraction leaves the accumulator at zero */
    Stmt *lp = loop_stmt(L, trips, 2);
    load_operand_tile(L, &lp->body, As, a, n, bidx, nb, m, M, ka, K); /* a[batch..., m, ka] */
    load_operand_tile(L, &lp->body, Bs, b, n, bidx, nb, kb, K, col, N); /* b[batch..., kb, col] */
    Stmt *gm = stmt(L, &lp->body, ST_GEMM);
    gm->dst = Cf;
    gm->a = As;
    gm->b = Bs;
  }
  cover(L, n);
  Stmt *st = stmt(L, &k->body, ST_STORE);
  memcpy(full, bidx, sizeof(SExpr *) * (size_t)nb);
  full[nb] = m;
  full[nb + 1] = col;
  store_to(L, st, n, full);
  st->value = sx_tile(L->a, Cf, V(L, TV_I), V(L, TV_J));
  st->mask = AND(L, LT(L, m, I(L, M)), LT(L, col, I(L, N)));
  st->ext[0] = BM;
  st->ext[1] = BN;
}

/* A row statistic: a reduction's result, or an elementwise function of
   such results (and of constants) of the same shape: rsqrt(mean(x²) + ε),
   a running max, a logsumexp.  Temporaries of this kind are stored in
   float32 whatever the storage type (they are few bytes, and rounding a
   statistic to bf16 perturbs every element it scales). */
static bool row_statistic(const Node *n, int depth) {
  OpClass c = op_info[n->op].cls;
  if (c == OPC_REDUCE) return true;
  if (depth > 16 || !(c == OPC_UNARY || c == OPC_BINARY || c == OPC_SELECT)) return false;
  bool any = false;
  for (int i = 0; i < n->nin; i++) {
    const Node *x = n->in[i];
    if (x->op == OP_CONST || x->shape.rank == 0) continue;
    if (!shape_equal(&x->shape, &n->shape) || !row_statistic(x, depth + 1)) return false;
    any = true;
  }
  return any;
}

DType tile_storage_of(DType storage, const Node *n, GlobalRole role) {
  switch (n->kind) {
  case EK_REAL: return role == GB_TEMP && row_statistic(n, 0) ? DT_F32 : storage;
  case EK_INT: return DT_I64;
  case EK_BOOL: return DT_BOOL;
  }
  return storage;
}

/* A global's name: the parameter's name, unless it would clash with a name
   the emitted code uses (index variables, modules, other globals). */
static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h ? h : 1;
}

/* Is the hash of a global's name recorded?  (with add: record it) */
static bool name_seen(TileProgram *tp, uint64_t h, bool add) {
  Arena *a = tp->g->ctx->arena;
  if (add && 2 * (tp->globals.len + 1) >= tp->name_cap) {
    int cap = tp->name_cap ? tp->name_cap * 2 : 64;
    uint64_t *t = arena_alloc(a, sizeof(uint64_t) * (size_t)cap);
    for (int i = 0; i < tp->name_cap; i++)
      if (tp->name_hash[i])
        for (int j = (int)(tp->name_hash[i] % (uint64_t)cap);; j = (j + 1) % cap)
          if (!t[j]) {
            t[j] = tp->name_hash[i];
            break;
          }
    tp->name_hash = t;
    tp->name_cap = cap;
  }
  if (!tp->name_cap) return false;
  for (int j = (int)(h % (uint64_t)tp->name_cap);; j = (j + 1) % tp->name_cap) {
    if (tp->name_hash[j] == h) return true;
    if (!tp->name_hash[j]) {
      if (add) tp->name_hash[j] = h;
      return false;
    }
  }
}

static const char *unique_name(TileProgram *tp, const char *want) {
  static const char *reserved[] = {"bx", "by", "bz", "i", "j", "k", "k1", "k2", "T", "tl", "tilelang", "triton",
                                   "torch", "run", "reference", "main", "kernel", "math"};
  const char *name = want;
  for (int attempt = 1;; attempt++) {
    bool clash = false;
    for (size_t r = 0; r < sizeof reserved / sizeof reserved[0]; r++) clash |= !strcmp(name, reserved[r]);
    /* a name whose hash no global has is new; otherwise compare */
    if (!clash && name_seen(tp, name_hash(name), false))
      for (int g = 0; g < tp->globals.len && !clash; g++) clash = !strcmp(name, tp->globals.data[g]->name);
    if (!clash) {
      name_seen(tp, name_hash(name), true);
      return name;
    }
    name = arena_printf(tp->g->ctx->arena, "%s_%d", want, attempt);
  }
}

TBuf *tile_global_buf(TileProgram *tp, const Node *n, const char *name, GlobalRole role) {
  Arena *a = tp->g->ctx->arena;
  name = unique_name(tp, name);
  TBuf *b = arena_alloc(a, sizeof *b);
  b->id = tp->globals.len;
  b->name = name;
  b->scope = SCOPE_GLOBAL;
  b->dtype = tile_storage_of(tp->dtype, n, role);
  b->node = n;
  b->role = role;
  b->shape = n->shape;
  vec_push(a, &tp->globals, b);
  return b;
}

TBuf *tile_scratch_buf(TileProgram *tp, const char *name, const Shape *shape, DType dt, double init) {
  Arena *a = tp->g->ctx->arena;
  TBuf *b = arena_alloc(a, sizeof *b);
  b->id = tp->globals.len;
  b->name = unique_name(tp, name);
  b->scope = SCOPE_GLOBAL;
  b->dtype = dt;
  b->role = GB_SCRATCH;
  b->init = init;
  b->shape = *shape;
  vec_push(a, &tp->globals, b);
  return b;
}

TileProgram *tile_program_new(Graph *g, DType dtype) {
  Arena *a = g->ctx->arena;
  TileProgram *tp = arena_alloc(a, sizeof *tp);
  tp->g = g;
  tp->dtype = dtype;
  tp->of_node = arena_alloc(a, sizeof(TBuf *) * (size_t)(g->nnodes ? g->nnodes : 1));
  for (int i = 0; i < g->ninputs; i++)
    tp->of_node[g->inputs[i]->id] = tile_global_buf(tp, g->inputs[i], g->inputs[i]->name, GB_INPUT);
  return tp;
}

void tile_program_output(TileProgram *tp) {
  Graph *g = tp->g;
  /* the output gets a buffer of its own, even when it is an input */
  tp->output = tile_global_buf(tp, g->output, "out", GB_OUTPUT);
  if (g->output->op != OP_INPUT) tp->of_node[g->output->id] = tp->output;
}

void tile_lower_node(TileProgram *tp, const Node *n) {
  Graph *g = tp->g;
  Arena *a = g->ctx->arena;
  Lower L = {.a = a, .g = g, .tp = tp};
  if (shape_numel(&n->shape) == 0) return; /* nothing to compute */
  if (n == g->output && n->op == OP_INPUT) {
    /* a copy: map the input's load into the output */
    TBuf *save = tp->of_node[n->id];
    tp->of_node[n->id] = tp->output;
    lower_map(&L, n);
    tp->of_node[n->id] = save;
    Stmt *st = L.k->body.data[0];
    st->value = sx_load(a, save, st->gidx, st->ngidx);
    return;
  }
  switch (op_info[n->op].cls) {
  case OPC_REDUCE: lower_reduce(&L, n); break;
  case OPC_MATMUL: lower_matmul(&L, n); break;
  case OPC_LEAF:
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT:
  case OPC_LAYOUT:
  case OPC_CONCAT:
  case OPC_GATHER: lower_map(&L, n); break;
  }
  /* a grid past y/z's limit runs folded into x (what cannot fold, the tile
     checker refuses) */
  if (L.k) tile_fold_grid(a, L.k);
  if (L.k) tile_simplify_indices(L.k, a);
  if (L.k) tile_fit_stages(L.k);
}

bool tile_materialized(const Graph *g, const int *uses, const Node *n) {
  Lower L = {.g = (Graph *)g, .uses = (int *)uses};
  return n->op != OP_INPUT && materialized(&L, n);
}

int *tile_use_counts(const Graph *g) {
  int *uses = arena_alloc(g->ctx->arena, sizeof(int) * (size_t)(g->nnodes ? g->nnodes : 1));
  for (int i = 0; i < g->nnodes; i++)
    for (int k = 0; k < g->nodes[i]->nin; k++) uses[g->nodes[i]->in[k]->id]++;
  return uses;
}

TileProgram *tile_lower(Graph *g, DType dtype) {
  TileProgram *tp = tile_program_new(g, dtype);
  int *uses = tile_use_counts(g);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (!tile_materialized(g, uses, n) || n == g->output) continue;
    tp->of_node[n->id] = tile_global_buf(tp, n, arena_printf(g->ctx->arena, "t%d_%s", n->id, op_info[n->op].name), GB_TEMP);
  }
  tile_program_output(tp);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    bool is_out = n == g->output;
    if (!is_out && (n->op == OP_INPUT || !tp->of_node[n->id])) continue;
    tile_lower_node(tp, n);
  }
  return tp;
}
