/*
 * lower_plan.c: a plan becomes a tile program.
 *
 * Naive kernels go through lower.c's rules (so the naive plan reproduces
 * the naive lowering byte for byte).  A fused kernel is lowered from its
 * axes and its stream law (stream.c):
 *
 *   grid     every GRID axis is tiled; its blocks are placed on CUDA's grid
 *            (x innermost, the output's last dimension first), folded into
 *            one grid dimension where CUDA's limits require (grid_place);
 *   tiles    a member gets a tile buffer when a tile statement needs it
 *            whole: a loop-carried state (float32 fragment), a matrix
 *            product's result (float32), a reduction's operand (float32,
 *            reduced axis last), a product's operands (storage type:
 *            shared when read from memory, a fragment when computed); every
 *            other member is inlined into the expressions that read it;
 *   lists    statements go where their inputs exist: `pre` (before any
 *            loop), the body of pass p's loop over the stream axis (a
 *            member that varies along it), or after pass p (a member that
 *            reads pass p's states and does not vary);
 *   states   fill with the monoid's identity before the first pass; each
 *            iteration of its pass folds in one tile: amax/amin by a
 *            reduce into the state, a sum by a reduce, a product by a
 *            gemm; a state under the exponential law is first rescaled by
 *            exp(c·(D_prev − D_safe)) and its terms use D_safe (the running
 *            max, −∞ read as 0); factors that left the loop multiply the
 *            state where it is read; a mean and its mean-shifted sum of
 *            squares alone in a loop that holds every lane a trip keep
 *            them lane by lane and merge the lanes after it (lane-wise
 *            Welford, below);
 *   masks    a select on an index predicate (causal, window) bounds the
 *            stream loop: tiles where the predicate is false everywhere are
 *            neutral (stream.c) and fall outside [lo, hi), computed by
 *            interval arithmetic on the predicate's affine form; a map
 *            holding the select is emitted twice, under a block-uniform if
 *            that takes the unmasked copy on tiles where the predicate is
 *            true everywhere;
 *   tails    a tile that overhangs its axis is masked: loads read the
 *            consumer's identity (0 for products and sums, −∞ for amax),
 *            stores skip the overhang.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

enum { L_PRE = 0 }; /* statement lists: 0 pre; 1 + 2p the loop body of pass p; 2 + 2p after pass p */
#define NLISTS (1 + 2 * PLAN_MAX_PASSES)
static int list_body(int p) { return 1 + 2 * p; }
static int list_after(int p) { return 2 + 2 * p; }
static bool is_body(int l) { return l % 2 == 1; }

typedef enum { SUB_NONE, SUB_SAFE, SUB_MEAN, SUB_KEEP, SUB_UNMASK } SubKind;

typedef struct OpTile { const Node *n; int8_t ax[2]; bool trans; int list; DType dt; TBuf *buf; } OpTile;

typedef struct LP {
  int *mark;          /* walks over members: mark[id] == epoch once visited (no array per walk) */
  int epoch;
  const Node **stack; /* their stack (nn) */
  Arena *a;
  Graph *g;
  Plan *p;
  TileProgram *tp;
  PKernel *pk;
  Kernel *k;
  int nn;
  /* per node: its float32 tile in this kernel, the tile's axes, the list it
     was computed in and the law state it was computed under */
  TBuf **tile;
  int8_t (*tax)[2];
  int *tlist;
  const Node **tdep;
  double *tother;       /* per node: the value its tile holds where it overhangs its axes */
  double want_other;    /* the overhang value the tile being computed needs */
  int want_row;         /* >= 0: compute the tile as a [1, n] matrix along this axis (a reduction's row) */
  /* per node: a substitution while building expressions */
  SubKind *sub;
  int8_t *sub_keep;
  StmtList lists[NLISTS];
  int cur;              /* the list statements go to */
  StmtList *target;     /* ... unless a nested loop's body takes them */
  int pass;             /* the pass being built (-1 outside loops) */
  const PState *st;     /* the state whose update is being built */
  SExpr *base[PLAN_MAX_AXES];
  int dom[2];           /* the axes i and j iterate in the statement being built */
  TBuf *prev[PLAN_MAX_STATES], *rho[PLAN_MAX_STATES];
  bool nan_ok[PLAN_MAX_STATES]; /* a max/min state whose dropped NaNs reach every output anyway */
  /* lane-wise Welford (lane_pairs): per state 1 the sum S of a pair, 2 its
     mean-shifted sum of squares Q, 0 neither; the pair's other state; its
     [rows, stream tile] float32 lanes (S: sums, Q: squares about each
     lane's own mean); the trips every lane sees */
  int8_t lane[PLAN_MAX_STATES];
  int lane_mate[PLAN_MAX_STATES];
  TBuf *lane_tile[PLAN_MAX_STATES];
  int64_t lane_trips;
  TBuf *part[PLAN_MAX_STATES];  /* split partials of each state (scratch) */
  TBuf *partf[PLAN_MAX_STATES]; /* ... and of its law's factor per row (law_f), for the combine */
  SExpr *gap_lo[PLAN_MAX_PASSES], *gap_hi[PLAN_MAX_PASSES]; /* tiles of pass p's loop to skip (NULL: none) */
  SExpr *chunk0;        /* a split stream: the first tile of this block's chunk (NULL: none) */
  bool chunk_rel;       /* ... and the loop variable counts from it (even chunks) */
  int64_t per;          /* ... tiles a chunk */
  OpTile optiles[32];
  int noptiles;
  /* masks of the pass being built */
  int nmask;
  const Node *mask_sel[4];
  SExpr *mask_true[4];
  bool saw_mask;
  int ntile;
  bool failed;
  char why[200];
} LP;

static void lp_fail(LP *L, const char *why) {
  if (!L->failed) snprintf(L->why, sizeof L->why, "%s", why);
  L->failed = true;
}

static SExpr *I(LP *L, int64_t v) { return sx_int(L->a, v); }
static SExpr *IX(LP *L, IdxOp op, SExpr *x, SExpr *y) { return sx_idx(L->a, op, x, y); }
static SExpr *OPX(LP *L, Op op, ElemKind ek, SExpr *x, SExpr *y) {
  SExpr *args[2] = {x, y};
  return sx_op(L->a, op, ek, args, y ? 2 : 1);
}
static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static Stmt *emit(LP *L, StmtKind kind) {
  Stmt *s = arena_alloc(L->a, sizeof *s);
  s->kind = kind;
  vec_push(L->a, L->target ? L->target : &L->lists[L->cur], s);
  return s;
}

static const PState *state_info(LP *L, const Node *n) {
  for (int i = 0; i < L->pk->nstates; i++)
    if (L->pk->states[i].node == n) return &L->pk->states[i];
  return NULL;
}

static int state_index(LP *L, const Node *n) {
  for (int i = 0; i < L->pk->nstates; i++)
    if (L->pk->states[i].node == n) return i;
  return -1;
}

/* ---- axes and statement domains ---- */

static int64_t extent(LP *L, int a) { return L->pk->ax[a].tile; }

/* the axes of node n a tile of it spans (extent above 1), in dimension order;
   returns how many (3: too many) */
static int tile_axes(LP *L, const Node *n, int8_t out[2]) {
  int c = 0;
  out[0] = out[1] = -1;
  for (int d = 0; d < n->shape.rank; d++) {
    int a = L->pk->dimax[n->id][d];
    if (a < 0 || extent(L, a) <= 1 || (c && out[0] == a)) continue;
    if (c >= 2) return 3;
    out[c++] = (int8_t)a;
  }
  return c;
}

/* a product's tile is a matrix whatever its extents: (rows, columns), an
   axis -1 where the dimension has size 1 */
static bool is_prod(const Node *n) { return op_info[n->op].cls == OPC_MATMUL; }

static void node_axes(LP *L, const Node *n, int8_t out[2]) {
  if (is_prod(n)) {
    int r = n->shape.rank;
    out[0] = (int8_t)L->pk->dimax[n->id][r - 2];
    out[1] = (int8_t)L->pk->dimax[n->id][r - 1];
    return;
  }
  tile_axes(L, n, out);
}

static void set_dom(LP *L, const int8_t ax[2]) {
  L->dom[0] = ax[0];
  L->dom[1] = ax[1];
}

static SExpr *coord(LP *L, int a) {
  if (a == L->dom[0]) return sx_var(L->a, TV_I);
  if (a == L->dom[1]) return sx_var(L->a, TV_J);
  if (extent(L, a) > 1) lp_fail(L, "internal: a statement reads along an axis it does not iterate");
  return I(L, 0);
}

/* the global index along axis a in the current statement */
static SExpr *gidx(LP *L, int a) { return IX(L, IX_ADD, L->base[a], coord(L, a)); }

/* "in range along a" for an overhanging tile; NULL when the tiles divide the axis */
static SExpr *in_range(LP *L, int a) {
  const PAxis *ax = &L->pk->ax[a];
  if (ax->size % extent(L, a) == 0) return NULL;
  return IX(L, IX_LT, gidx(L, a), I(L, ax->size));
}

/* does a tile over these axes overhang one of them (so it holds padding)? */
static bool overhangs(LP *L, const int8_t ax[2]) {
  for (int c = 0; c < 2; c++)
    if (ax[c] >= 0 && L->pk->ax[ax[c]].size % extent(L, ax[c]) != 0) return true;
  return false;
}

static SExpr *and_mask(LP *L, SExpr *m, SExpr *c) { return !c ? m : !m ? c : IX(L, IX_AND, m, c); }

static SExpr *dom_mask(LP *L, const int8_t ax[2]) {
  SExpr *mask = NULL;
  for (int c = 0; c < 2; c++)
    if (ax[c] >= 0) mask = and_mask(L, mask, in_range(L, ax[c]));
  return mask;
}

/* the index vector of member n in the current statement */
static void member_idx(LP *L, const Node *n, SExpr **idx) {
  for (int d = 0; d < n->shape.rank; d++) {
    int a = L->pk->dimax[n->id][d];
    idx[d] = a < 0 ? I(L, 0) : gidx(L, a);
  }
}

/* ---- expressions ---- */

static SExpr *tile_read(LP *L, const Node *n) {
  TBuf *t = L->tile[n->id];
  int8_t *ax = L->tax[n->id];
  SExpr *i = ax[0] >= 0 ? coord(L, ax[0]) : I(L, 0);
  if (t->shape.rank == 1) return sx_tile(L->a, t, i, NULL);
  return sx_tile(L->a, t, i, ax[1] >= 0 ? coord(L, ax[1]) : I(L, 0));
}

static SExpr *value_of(LP *L, const Node *n, SExpr **idx, bool top);

static SExpr *expr_of(LP *L, const Node *n) {
  SExpr *idx[TS_MAX_RANK];
  member_idx(L, n, idx);
  return value_of(L, n, idx, false);
}

/* a state's value where it is read: its tile times the factors that left the loop */
static SExpr *state_value(LP *L, const Node *n) {
  const PState *st = state_info(L, n);
  SExpr *v = tile_read(L, n);
  if (L->st == st) return v; /* inside its own update */
  for (int i = 0; i < st->npost; i++)
    v = OPX(L, st->post[i].sign > 0 ? OP_MUL : OP_DIV, EK_REAL, v, expr_of(L, st->post[i].f));
  return v;
}

/* The elements of the stream axis before tile `tiles` (an index
   expression): min(tiles * tile, size). */
static SExpr *stream_prefix(LP *L, SExpr *tiles) {
  int64_t T = L->pk->ax[L->pk->stream].tile, n = L->pk->ax[L->pk->stream].size;
  return IX(L, IX_MIN, IX(L, IX_MUL, tiles, I(L, T)), I(L, n));
}

/* Elements of the stream this block has folded in before (after = 0) or
   after (1) the current tile, as a real: of its chunk where the stream is
   split. */
static SExpr *seen_count(LP *L, int after) {
  SExpr *k = IX(L, IX_ADD, sx_var(L->a, TV_K), I(L, after));
  if (L->chunk0 && L->chunk_rel) k = IX(L, IX_ADD, k, L->chunk0); /* the tile's index along the whole stream */
  SExpr *c = stream_prefix(L, k);
  if (L->chunk0) c = IX(L, IX_SUB, c, stream_prefix(L, L->chunk0));
  return OPX(L, OP_CAST, EK_REAL, c, NULL);
}

static SExpr *hook(Pw *p, const Node *n, SExpr **idx, bool top) {
  LP *L = p->ud;
  if (L->pk->loaded[n->id]) return L->tile[n->id] ? tile_read(L, n) : NULL; /* a tensor held in a tile, or loaded */
  if (!L->pk->member[n->id]) return NULL;
  for (int q = 0; q < L->nmask; q++)
    if (L->mask_sel[q] == n && L->sub[n->id] == SUB_NONE && (top || !L->tile[n->id])) L->saw_mask = true;
  switch (L->sub[n->id]) {
  case SUB_NONE: break;
  case SUB_SAFE: { /* the running max, −∞ read as 0 */
    SExpr *eq = OPX(L, OP_EQ, EK_BOOL, tile_read(L, n), sx_real(L->a, op_monoid(n->op)->identity));
    SExpr *args[3] = {eq, sx_real(L->a, 0), tile_read(L, n)};
    return sx_op(L->a, OP_SELECT, EK_REAL, args, 3);
  }
  case SUB_MEAN: /* a sum read as if the elements seen so far were all: S_seen * n / n_seen */
    return OPX(L, OP_MUL, EK_REAL, tile_read(L, n),
               OPX(L, OP_DIV, EK_REAL, sx_real(L->a, (double)L->pk->ax[L->pk->stream].size), seen_count(L, 1)));
  case SUB_UNMASK: /* a mask select on a tile where it is all true: its kept branch (a tile of it is read as is) */
    if (L->tile[n->id] && !top) return tile_read(L, n);
    /* fallthrough */
  case SUB_KEEP: {
    SExpr *sub[TS_MAX_RANK];
    const Node *x = n->in[L->sub_keep[n->id]];
    tile_broadcast_index(&x->shape, &n->shape, idx, sub, L->a);
    return tile_pointwise(p, x, sub, false);
  }
  }
  if (!L->tile[n->id]) return NULL;
  if (state_info(L, n)) return state_value(L, n);
  OpClass c = op_info[n->op].cls;
  if (top && c != OPC_REDUCE && c != OPC_MATMUL) return NULL; /* a map computing n itself */
  return tile_read(L, n);
}

static SExpr *value_of(LP *L, const Node *n, SExpr **idx, bool top) {
  Pw p = {.a = L->a, .tp = L->tp, .k = L->k, .hook = hook, .ud = L, .computed = L->pk->member};
  SExpr *e = tile_pointwise(&p, n, idx, top);
  if (p.failed) {
    char why[120];
    snprintf(why, sizeof why, "internal: %%%d (%s) is read before it is computed", p.failed->id, op_info[p.failed->op].name);
    lp_fail(L, why);
  }
  return e;
}

/* ---- tiles ---- */

/* a tile over axes ax (a matrix with mat: extent 1 where an axis is -1) */
static TBuf *new_tile(LP *L, const char *what, Scope scope, DType dt, const int8_t ax[2], bool mat) {
  TBuf *b = arena_alloc(L->a, sizeof *b);
  b->id = L->k->bufs.len;
  b->name = arena_printf(L->a, "%s%d", what, L->ntile++);
  b->scope = scope;
  b->dtype = dt;
  b->shape.rank = mat || ax[1] >= 0 ? 2 : 1;
  b->shape.d[0].n = ax[0] >= 0 ? extent(L, ax[0]) : 1;
  if (b->shape.rank == 2) b->shape.d[1].n = ax[1] >= 0 ? extent(L, ax[1]) : 1;
  vec_push(L->a, &L->k->bufs, b);
  return b;
}

/* MAP dst := (the value of n, or v) over axes ax, overhang masked to `other`;
   a map that reads a mask select of this pass is emitted twice, under an
   if that takes the unmasked copy on tiles where every mask is all true */
static void emit_map(LP *L, TBuf *dst, const int8_t ax[2], const Node *n, SExpr **idx, SExpr *v, double other) {
  set_dom(L, ax);
  L->saw_mask = false;
  if (n) v = value_of(L, n, idx, true);
  Stmt *m = arena_alloc(L->a, sizeof *m);
  m->kind = ST_MAP;
  m->dst = dst;
  m->value = v;
  SExpr *mask = dom_mask(L, ax);
  if (mask) m->mask = mask, m->other = sx_real(L->a, other);
  Stmt *put = m;
  if (n && L->saw_mask) {
    SExpr *cond = NULL;
    for (int q = 0; q < L->nmask; q++) {
      L->sub[L->mask_sel[q]->id] = SUB_UNMASK;
      L->sub_keep[L->mask_sel[q]->id] = 1;
      cond = and_mask(L, cond, L->mask_true[q]);
    }
    Stmt *um = arena_alloc(L->a, sizeof *um);
    *um = *m;
    um->value = value_of(L, n, idx, true);
    for (int q = 0; q < L->nmask; q++) L->sub[L->mask_sel[q]->id] = SUB_NONE;
    put = arena_alloc(L->a, sizeof *put);
    put->kind = ST_IF;
    put->cond = cond;
    put->specialize = true;
    vec_push(L->a, &put->body, um);
    vec_push(L->a, &put->orelse, m);
  }
  vec_push(L->a, L->target ? L->target : &L->lists[L->cur], put);
}

/* the states member n reads (through members that are not states), or n
   itself when it is a state: the latest pass.  A member loaded from memory
   (another kernel stored it) reads no state here, whatever computed it. */
static int last_pass_read(LP *L, const Node *n) {
  const PState *ns = state_info(L, n);
  if (ns) return ns->pass; /* a state is read where its pass has run: a product's operand may be one */
  if (L->pk->loaded[n->id]) return -1;
  int last = -1, ep = ++L->epoch;
  const Node **stack = L->stack;
  int sp = 0;
  stack[sp++] = n;
  L->mark[n->id] = ep;
  while (sp) {
    const Node *m = stack[--sp];
    for (int i = 0; i < m->nin; i++) {
      const Node *x = m->in[i];
      if (!L->pk->member[x->id] || L->mark[x->id] == ep) continue;
      L->mark[x->id] = ep;
      const PState *xs = state_info(L, x);
      if (xs) last = xs->pass > last ? xs->pass : last;
      else if (!L->pk->loaded[x->id]) stack[sp++] = x;
    }
  }
  return last;
}

/* does member n read state D (through members that are not states)? */
static bool reads_state(LP *L, const Node *n, const Node *D) {
  if (!D) return false;
  int ep = ++L->epoch;
  const Node **stack = L->stack;
  int sp = 0;
  stack[sp++] = n;
  while (sp) {
    const Node *m = stack[--sp];
    for (int i = 0; i < m->nin; i++) {
      const Node *x = m->in[i];
      if (x == D) return true;
      if (!L->pk->member[x->id] || L->mark[x->id] == ep || state_info(L, x)) continue;
      L->mark[x->id] = ep;
      stack[sp++] = x;
    }
  }
  return false;
}

/* where a non-state member's tile is computed */
static int home(LP *L, const Node *n) {
  if (pk_varies(L->pk, n)) return L->cur;
  int last = last_pass_read(L, n);
  return last < 0 ? L_PRE : list_after(last);
}

static void compute_tile(LP *L, const Node *n);

/* Make sure member n's tile is computed where the current statement can read it. */
static void ensure(LP *L, const Node *n) {
  if (state_info(L, n)) return; /* updated by its pass */
  int want = home(L, n);
  if (pk_varies(L->pk, n) && !is_body(want)) {
    char why[120];
    snprintf(why, sizeof why, "internal: the per-tile value %%%d (%s) is needed outside the stream loop", n->id,
             op_info[n->op].name);
    lp_fail(L, why);
    return;
  }
  const Node *dep = L->st && is_body(want) && reads_state(L, n, L->st->dep) ? L->st->dep : NULL;
  if (L->tile[n->id] && L->tlist[n->id] == want && L->tdep[n->id] == dep) return;
  int saved = L->cur, d0 = L->dom[0], d1 = L->dom[1];
  StmtList *saved_target = L->target;
  const PState *saved_st = L->st;
  if (want != L->cur) L->target = NULL, L->st = NULL;
  L->cur = want;
  compute_tile(L, n);
  L->tlist[n->id] = want;
  L->tdep[n->id] = dep;
  L->cur = saved, L->target = saved_target, L->st = saved_st;
  L->dom[0] = d0, L->dom[1] = d1;
}

/* Compute every member tile the expression of n will read (n itself expanded). */
static void ensure_inputs(LP *L, const Node *n, bool top) {
  if (L->pk->loaded[n->id]) {
    ensure(L, n);
    return;
  }
  if (!L->pk->member[n->id]) return;
  if (L->sub[n->id] == SUB_SAFE || L->sub[n->id] == SUB_MEAN) return;
  if (L->sub[n->id] == SUB_KEEP) {
    ensure_inputs(L, n->in[L->sub_keep[n->id]], false);
    return;
  }
  const PState *st = state_info(L, n);
  if (st) { /* updated by its pass; where it is read, only its post factors */
    if (L->st != st)
      for (int i = 0; i < st->npost; i++) ensure_inputs(L, st->post[i].f, false);
    return;
  }
  OpClass c = op_info[n->op].cls;
  if (!top && (c == OPC_REDUCE || c == OPC_MATMUL || L->tile[n->id])) {
    ensure(L, n);
    return;
  }
  for (int i = 0; i < n->nin; i++) ensure_inputs(L, n->in[i], false);
}

/* does member n's value read a matrix tile of this kernel (not only row
   statistics)? */
static bool reads_tiles(LP *L, const Node *n) {
  if (!L->pk->member[n->id]) return false;
  if (L->tile[n->id] || state_info(L, n)) return L->tile[n->id] && L->tile[n->id]->shape.rank == 2;
  if (L->sub[n->id] == SUB_SAFE || L->sub[n->id] == SUB_MEAN) return true;
  if (L->sub[n->id] == SUB_KEEP) return reads_tiles(L, n->in[L->sub_keep[n->id]]);
  for (int i = 0; i < n->nin; i++)
    if (reads_tiles(L, n->in[i])) return true;
  return false;
}

/* the list an operand tile belongs to: loaded per iteration if it moves
   along the stream or an inner loop, else once, where its inputs exist */
static bool axis_moves(LP *L, int a) {
  return a >= 0 && (L->pk->ax[a].role == AX_STREAM || L->pk->ax[a].role == AX_INNER);
}

/* a product's operand tile in the storage type: A [m, k], B [k, n]
   (B = xᵀ read from memory is loaded as x's [n, k] tile, transposed by the gemm) */
/* Does a sum state of the pass being lowered reduce x itself?  (Experimental,
   TS_ONE_EXP=1: with it the cost model, uncalibrated in how it overlaps
   HBM traffic with compute, prices materialized scores at 16k as cheap as
   FlashAttention's loop; on by default once the H200 has timed both.) */
static bool summed_here(LP *L, const Node *x) {
  const char *on = getenv("TS_ONE_EXP");
  if (!on || strcmp(on, "1")) return false;
  for (int i = 0; i < L->pk->nstates; i++) {
    const PState *st = &L->pk->states[i];
    if (st->node->op == OP_SUM && st->node->in[0] == x && st->pass == L->pass && !st->ndrop) return true;
  }
  return false;
}

static TBuf *operand_tile(LP *L, const Node *mm, int o, bool *trans) {
  const Node *x = mm->in[o];
  int r = mm->shape.rank, red = L->pk->redax[mm->id];
  int row = L->pk->dimax[mm->id][r - 2], col = L->pk->dimax[mm->id][r - 1];
  int8_t ax[2] = {(int8_t)(o == 0 ? row : red), (int8_t)(o == 0 ? red : col)};
  bool in_mem = !L->pk->member[x->id];
  *trans = false;
  int xr = x->shape.rank;
  /* a right operand that permutes memory so that its contraction runs
     along memory's last dimension (kᵀ; also the heads of a stored
     projection split and transposed, splitHeads(h Wk)ᵀ, a permute
     [0, 2, 3, 1] of its reshape) is loaded as stored, rows along the
     columns, and the product transposes it: any permutation, not only a
     swap of the last two */
  if (o == 1 && in_mem && x->op == OP_PERMUTE && xr >= 2)
    *trans = x->perm[xr - 2] == xr - 1; /* the contraction runs along the stored rows */
  int8_t tax[2] = {ax[0], ax[1]};
  if (*trans) tax[0] = ax[1], tax[1] = ax[0];
  /* where: per iteration if it moves, else once before the loops */
  int list = L->cur;
  bool moves = axis_moves(L, ax[0]) || axis_moves(L, ax[1]);
  if (!in_mem) moves |= pk_varies(L->pk, x);
  StmtList *saved_target = L->target;
  int saved_cur = L->cur;
  if (!moves && in_mem) list = L_PRE;
  if (!moves && !in_mem) {
    int last = last_pass_read(L, x);
    list = last < 0 ? L_PRE : list_after(last);
  }
  for (int i = 0; i < L->noptiles; i++) {
    OpTile *t = &L->optiles[i];
    if (t->n == x && t->ax[0] == tax[0] && t->ax[1] == tax[1] && t->trans == *trans && t->list == list &&
        (list != L->cur || !L->target))
      return t->buf;
  }
  if (list != L->cur) L->target = NULL, L->cur = list;
  if (!in_mem) ensure_inputs(L, x, true);
  /* an input already loaded into a shared tile of the storage type along
     the operand's axes is the operand itself, no copy of it (also through
     factors the stream law moves after the loop: x r with r a row
     statistic is x here) */
  const Node *src = x;
  while (L->pk->member[src->id] && L->sub[src->id] == SUB_KEEP) src = src->in[L->sub_keep[src->id]];
  if (!*trans && L->pk->loaded[src->id]) {
    ensure(L, src);
    TBuf *xt = L->tile[src->id];
    if (xt && xt->scope == SCOPE_SHARED && xt->dtype == L->tp->dtype && L->tax[src->id][0] == tax[0] &&
        L->tax[src->id][1] == tax[1]) {
      L->target = saved_target, L->cur = saved_cur;
      return xt;
    }
  }
  /* shared memory, unless the operand is made from register tiles (a
     softmax's probabilities: TileLang feeds those to the gemm from
     registers) */
  bool shared = in_mem || o == 1 || !reads_tiles(L, x);
  TBuf *t = new_tile(L, o == 0 ? "A" : "B", shared ? SCOPE_SHARED : SCOPE_FRAGMENT, L->tp->dtype, tax, true);
  t->node = x; /* a computed operand is rounded to the storage type here (verify's bound counts it) */
  set_dom(L, tax);
  /* the operand's index: mm's batch axes, then (row, red) or (red, col) */
  SExpr *full[TS_MAX_RANK], *idx[TS_MAX_RANK];
  for (int d = 0; d < r - 2; d++) {
    int a = L->pk->dimax[mm->id][d];
    full[d] = a < 0 ? I(L, 0) : gidx(L, a);
  }
  full[r - 2] = ax[0] >= 0 ? gidx(L, ax[0]) : I(L, 0);
  full[r - 1] = ax[1] >= 0 ? gidx(L, ax[1]) : I(L, 0);
  Shape ms = mm->shape;
  ms.d[r - 2] = x->shape.d[xr - 2];
  ms.d[r - 1] = x->shape.d[xr - 1];
  tile_broadcast_index(&x->shape, &ms, full, idx, L->a);
  if (*trans) {
    SExpr *sub[TS_MAX_RANK];
    for (int d = 0; d < xr; d++) sub[x->perm[d]] = idx[d];
    emit_map(L, t, tax, NULL, NULL, value_of(L, x->in[0], sub, false), 0.0);
  } else if (in_mem) {
    emit_map(L, t, tax, NULL, NULL, value_of(L, x, idx, false), 0.0);
  } else if (o == 0 && summed_here(L, x)) {
    /* a left operand a sum of this pass also reduces (FlashAttention's P:
       the row sum and P V): computed once in float32, the sum reads that
       tile and the product its copy in the storage type (one exp per
       score, not two) */
    double saved_other = L->want_other;
    L->want_other = 0.0;
    ensure(L, x);
    L->want_other = saved_other;
    if (L->tile[x->id] && L->tile[x->id]->shape.rank == 2 && L->tax[x->id][0] == tax[0] && L->tax[x->id][1] == tax[1]) {
      set_dom(L, tax);
      emit_map(L, t, tax, NULL, NULL, tile_read(L, x), 0.0);
    } else {
      emit_map(L, t, tax, x, idx, NULL, 0.0);
    }
  } else {
    emit_map(L, t, tax, x, idx, NULL, 0.0);
  }
  L->target = saved_target, L->cur = saved_cur;
  if (L->noptiles < 32) L->optiles[L->noptiles++] = (OpTile){x, {tax[0], tax[1]}, *trans, list, L->tp->dtype, t};
  return t;
}

/* acc += A ⬝ B over mm's reduced axis; an INNER axis loops over it (k1) */
static void emit_product(LP *L, const Node *mm, TBuf *acc) {
  int red = L->pk->redax[mm->id];
  StmtList *saved = L->target;
  Stmt *lp = NULL;
  SExpr *saved_base = L->base[red];
  int saved_nop = L->noptiles;
  if (L->pk->ax[red].role == AX_INNER) {
    /* k1 inside the stream's loop; k where no stream loop encloses it (an
       axis of size 1 at small sizes) */
    TVar v = L->pk->stream >= 0 && is_body(L->cur) ? TV_K1 : TV_K;
    lp = emit(L, ST_LOOP);
    lp->var = v;
    lp->lo = I(L, 0);
    lp->hi = I(L, cdiv(L->pk->ax[red].size, L->pk->ax[red].tile));
    lp->stages = L->pk->stages ? L->pk->stages : 2;
    L->base[red] = IX(L, IX_MUL, sx_var(L->a, v), I(L, L->pk->ax[red].tile));
    L->target = &lp->body;
  }
  /* tiles made inside the inner loop hold its last chunk only: not
     reusable after it (nor by a second inner loop) */
  TBuf **kept = NULL;
  if (lp) {
    kept = arena_alloc(L->a, sizeof(TBuf *) * (size_t)L->nn);
    memcpy(kept, L->tile, sizeof(TBuf *) * (size_t)L->nn);
  }
  bool ta, tb;
  TBuf *A = operand_tile(L, mm, 0, &ta), *B = operand_tile(L, mm, 1, &tb);
  if (A && B) {
    Stmt *g = emit(L, ST_GEMM);
    g->dst = acc, g->a = A, g->b = B, g->trans_a = ta, g->trans_b = tb;
  }
  if (lp) {
    L->target = saved;
    L->base[red] = saved_base;
    L->noptiles = saved_nop;
    for (int i = 0; i < L->nn; i++)
      if (L->tile[i] != kept[i] && L->tile[i] != acc) L->tile[i] = kept[i];
  }
}

/* the tile of a reduction's operand, the reduced axis last */
static TBuf *reduce_source(LP *L, const Node *r) {
  const Node *x = r->in[0];
  int red = L->pk->redax[r->id];
  int8_t keep[2];
  if (tile_axes(L, r, keep) > 1) {
    lp_fail(L, "a reduction whose result spans two tile axes");
    return NULL;
  }
  int8_t ax[2] = {keep[0], (int8_t)red}; /* a matrix: [1, n] when the result is one value a block */
  bool member = pk_has_axes(L->pk, x);
  if (member) {
    int8_t nat[2];
    tile_axes(L, x, nat);
    /* a member whose own tile has this layout is computed once and shared */
    /* (its overhang must hold this reduction's identity: a tile padded
       otherwise is not shared) */
    bool same_pad = !L->tile[x->id] || L->tother[x->id] == op_monoid(r->op)->identity ||
                    !overhangs(L, L->tax[x->id]); /* (no overhang, no padding) */
    /* a row along the reduced axis alone: held as a [1, n] matrix */
    bool row = keep[0] < 0 && nat[0] == red && nat[1] < 0;
    if (row && L->tile[x->id] && L->tile[x->id]->shape.rank != 2) same_pad = false;
    bool prod_ok = op_info[x->op].cls != OPC_MATMUL || !overhangs(L, ax);
    /* (a combine kernel has no member tiles to share: it reads states) */
    bool combine = L->k->kind == KERNEL_COMBINE;
    if (((nat[0] == ax[0] && nat[1] == ax[1]) || row) && op_info[x->op].cls != OPC_REDUCE && prod_ok && same_pad &&
        !combine) {
      const Node *dep = L->st && reads_state(L, x, L->st->dep) ? L->st->dep : NULL;
      if (!L->tile[x->id] || L->tlist[x->id] != home(L, x) || L->tdep[x->id] != dep) L->tile[x->id] = NULL;
      if (!L->tile[x->id]) {
        double saved = L->want_other;
        int saved_row = L->want_row;
        L->want_other = op_monoid(r->op)->identity;
        L->want_row = row ? red : -1;
        ensure(L, x);
        L->want_other = saved;
        L->want_row = saved_row;
      }
      return L->tile[x->id];
    }
    OpClass xc = op_info[x->op].cls;
    if (!L->pk->loaded[x->id] && (xc == OPC_REDUCE || xc == OPC_MATMUL) && !state_info(L, x)) ensure(L, x); /* its tile, read below */
    else ensure_inputs(L, x, true);
  }
  TBuf *t = new_tile(L, "red", SCOPE_FRAGMENT, DT_F32, ax, true);
  set_dom(L, ax);
  SExpr *idx[TS_MAX_RANK];
  if (member) {
    member_idx(L, x, idx);
  } else {
    for (int d = 0; d < x->shape.rank; d++) {
      int a = d == r->axis ? red : L->pk->dimax[r->id][d];
      idx[d] = a < 0 ? I(L, 0) : gidx(L, a);
    }
  }
  if (member) emit_map(L, t, ax, x, idx, NULL, op_monoid(r->op)->identity);
  else emit_map(L, t, ax, NULL, NULL, value_of(L, x, idx, false), op_monoid(r->op)->identity);
  return t;
}

static bool mat_product(const PKernel *pk) {
  for (int i = 0; i < pk->members.len; i++)
    if (pk->members.data[i]->op == OP_MATMUL) return true;
  return false;
}

/* does a reduction of the kernel read n itself (TileLang reduces only
   from fragments: a shared tile finds no layout) */
static bool reduced_directly(const PKernel *pk, const Node *n) {
  for (int i = 0; i < pk->members.len; i++) {
    const Node *m = pk->members.data[i];
    if (op_info[m->op].cls == OPC_REDUCE && m->in[0] == n) return true;
  }
  return false;
}

/* compute a non-state member's tile into the current list */
static void compute_tile(LP *L, const Node *n) {
  tile_cover(L->a, L->k, n);
  bool loaded = L->pk->loaded[n->id], prod = is_prod(n) && !loaded;
  int8_t ax[2];
  if (prod) node_axes(L, n, ax);
  else tile_axes(L, n, ax);
  bool mat = false;
  /* a row along a reduced axis alone is a [1, n] matrix, the shape a
     reduction reads (one tile serves it and every other reader) */
  if (ax[0] >= 0 && ax[1] < 0 && L->pk->ax[ax[0]].reduced && !prod) ax[1] = ax[0], ax[0] = -1, mat = true;
  L->want_row = -1;
  double pad = L->want_other;
  L->want_other = 0.0;
  if (loaded) { /* a tensor in memory, read once into a tile */
    L->tile[n->id] = NULL;
    /* in a kernel with a product, a matrix tile of an input (or a stored
       temporary) of the storage type goes to shared memory as it is, where the pipeline can prefetch
       it (a register tile is loaded when the trip reaches it): the H200
       ran rmsnorm_matmul_16k's TileLang kernel in 1.866 ms so, 2.125 with
       the register tile (bench/results/2026-12-03-h200-swizzle-sharedx);
       TS_SHARED_X=0 keeps the register tile */
    static int shared_x = -1;
    if (shared_x < 0) shared_x = !getenv("TS_SHARED_X") || atoi(getenv("TS_SHARED_X"));
    const TBuf *gb = L->tp->of_node[n->id]; /* an input, or a temporary another kernel stored */
    bool sh = shared_x && mat_product(L->pk) && ax[0] >= 0 && ax[1] >= 0 && gb && gb->dtype == L->tp->dtype &&
              n->kind == EK_REAL && L->tp->dtype != DT_F32 && !reduced_directly(L->pk, n);
    TBuf *t = new_tile(L, "X", sh ? SCOPE_SHARED : SCOPE_FRAGMENT, sh ? L->tp->dtype : DT_F32, ax, mat);
    SExpr *idx[TS_MAX_RANK];
    set_dom(L, ax);
    member_idx(L, n, idx);
    emit_map(L, t, ax, NULL, NULL, value_of(L, n, idx, false), pad);
    L->tile[n->id] = t;
    memcpy(L->tax[n->id], ax, 2);
    L->tother[n->id] = pad;
    return;
  }
  OpClass c = op_info[n->op].cls;
  if (c == OPC_MATMUL) {
    TBuf *acc = new_tile(L, "C", SCOPE_FRAGMENT, DT_F32, ax, true);
    Stmt *f = emit(L, ST_FILL);
    f->dst = acc;
    f->value = sx_real(L->a, 0);
    emit_product(L, n, acc);
    L->tile[n->id] = acc;
    memcpy(L->tax[n->id], ax, 2);
    return;
  }
  if (c == OPC_REDUCE) {
    TBuf *src = reduce_source(L, n);
    if (!src) return;
    TBuf *dst = new_tile(L, "R", SCOPE_FRAGMENT, DT_F32, ax, false);
    Stmt *r = emit(L, ST_REDUCE);
    r->dst = dst, r->a = src, r->reduce_op = n->op, r->clear = true, r->of = n;
    L->tile[n->id] = dst;
    memcpy(L->tax[n->id], ax, 2);
    return;
  }
  ensure_inputs(L, n, true);
  TBuf *t = new_tile(L, "E", SCOPE_FRAGMENT, DT_F32, ax, mat);
  SExpr *idx[TS_MAX_RANK];
  set_dom(L, ax);
  member_idx(L, n, idx);
  emit_map(L, t, ax, n, idx, NULL, pad);
  L->tother[n->id] = pad;
  L->tile[n->id] = t;
  memcpy(L->tax[n->id], ax, 2);
}

/* ---- the stream loop's bounds from mask predicates ---- */

/* e = ci*i + cj*j + ck*k + rest, rest block-uniform */
typedef struct Aff { int64_t ci, cj, ck; SExpr *rest; } Aff;

static bool aff_of(LP *L, const SExpr *e, int64_t scale, Aff *out) {
  switch (e->kind) {
  case SX_INT: out->rest = IX(L, IX_ADD, out->rest, I(L, e->i * scale)); return true;
  case SX_VAR:
    if (e->var == TV_I) out->ci += scale;
    else if (e->var == TV_J) out->cj += scale;
    else if (e->var == TV_K) out->ck += scale;
    else if (e->var > TV_K) return false;
    else out->rest = IX(L, IX_ADD, out->rest, IX(L, IX_MUL, sx_var(L->a, e->var), I(L, scale)));
    return true;
  case SX_IDX:
    if (e->iop == IX_ADD) return aff_of(L, e->a[0], scale, out) && aff_of(L, e->a[1], scale, out);
    if (e->iop == IX_SUB) return aff_of(L, e->a[0], scale, out) && aff_of(L, e->a[1], -scale, out);
    if (e->iop == IX_MUL && e->a[1]->kind == SX_INT) return aff_of(L, e->a[0], scale * e->a[1]->i, out);
    if (e->iop == IX_MUL && e->a[0]->kind == SX_INT) return aff_of(L, e->a[1], scale * e->a[0]->i, out);
    if (e->iop == IX_MUL) { /* a block-uniform product */
      for (int q = 0; q < 2; q++) {
        Aff t = {0, 0, 0, I(L, 0)};
        if (!aff_of(L, e->a[q], 1, &t) || t.ci || t.cj || t.ck) return false;
      }
      out->rest = IX(L, IX_ADD, out->rest, IX(L, IX_MUL, (SExpr *)e, I(L, scale)));
      return true;
    }
    return false;
  case SX_OP:
    if (e->ek != EK_INT) return false;
    if (e->op == OP_NEG) return aff_of(L, e->a[0], -scale, out);
    if (e->op == OP_ADD) return aff_of(L, e->a[0], scale, out) && aff_of(L, e->a[1], scale, out);
    if (e->op == OP_SUB) return aff_of(L, e->a[0], scale, out) && aff_of(L, e->a[1], -scale, out);
    return false;
  case SX_REAL:
  case SX_LOAD:
  case SX_TILE: return false;
  }
  return false;
}

/* the affine form's extreme over the tile: rest + ci*[0, ti) + cj*[0, tj) */
static SExpr *extreme(LP *L, const Aff *d, int64_t ti, int64_t tj, bool want_max) {
  int64_t vi = d->ci * (ti - 1), vj = d->cj * (tj - 1), off = 0;
  off += want_max ? (vi > 0 ? vi : 0) : (vi < 0 ? vi : 0);
  off += want_max ? (vj > 0 ? vj : 0) : (vj < 0 ? vj : 0);
  return IX(L, IX_ADD, d->rest, I(L, off));
}

/* The abstract value of an expression under "the mask condition c is false
   everywhere in the tile" (data in memory and running states are finite). */
typedef enum { AV_UNKNOWN, AV_FINITE, AV_ZERO, AV_NEGINF, AV_POSINF } AVal;

static AVal aval_of(double v) {
  return v == 0 ? AV_ZERO : v == -INFINITY ? AV_NEGINF : v == INFINITY ? AV_POSINF : isfinite(v) ? AV_FINITE : AV_UNKNOWN;
}

static AVal aval(LP *L, const Node *n, const Node *cfalse, const Node *cfalse2, const PState *st) {
  if (n->op == OP_CONST) return aval_of(n->value);
  if (!L->pk->member[n->id] || state_info(L, n)) return AV_FINITE;
  for (int i = 0; st && i < st->ndrop; i++)
    if (st->drop[i].n == n) return aval(L, n->in[st->drop[i].keep], cfalse, cfalse2, st);
  if (n->op == OP_SELECT) {
    if (n->in[0] == cfalse || (cfalse2 && n->in[0] == cfalse2)) return aval(L, n->in[2], cfalse, cfalse2, st);
    AVal a = aval(L, n->in[1], cfalse, cfalse2, st), b = aval(L, n->in[2], cfalse, cfalse2, st);
    return a == b ? a : AV_UNKNOWN;
  }
  AVal a = n->nin > 0 ? aval(L, n->in[0], cfalse, cfalse2, st) : AV_FINITE;
  AVal b = n->nin > 1 ? aval(L, n->in[1], cfalse, cfalse2, st) : AV_FINITE;
  if (a == AV_UNKNOWN || b == AV_UNKNOWN) return AV_UNKNOWN;
  bool fin_a = a == AV_FINITE || a == AV_ZERO, fin_b = b == AV_FINITE || b == AV_ZERO;
  switch (n->op) {
  case OP_EXP: return a == AV_NEGINF ? AV_ZERO : a == AV_POSINF ? AV_POSINF : AV_FINITE;
  case OP_ADD:
    if ((a == AV_NEGINF && fin_b) || (b == AV_NEGINF && fin_a)) return AV_NEGINF;
    return fin_a && fin_b ? (a == AV_ZERO && b == AV_ZERO ? AV_ZERO : AV_FINITE) : AV_UNKNOWN;
  case OP_SUB:
    if ((a == AV_NEGINF && fin_b) || (b == AV_POSINF && fin_a)) return AV_NEGINF;
    return fin_a && fin_b ? AV_FINITE : AV_UNKNOWN;
  case OP_MUL:
    if ((a == AV_ZERO && fin_b) || (b == AV_ZERO && fin_a)) return AV_ZERO;
    if (n->in[1]->op == OP_CONST && n->in[1]->value > 0 && (a == AV_NEGINF || a == AV_POSINF)) return a;
    return fin_a && fin_b ? AV_FINITE : AV_UNKNOWN;
  case OP_DIV:
    if (a == AV_ZERO && b == AV_FINITE) return AV_ZERO;
    if (n->in[1]->op == OP_CONST && n->in[1]->value > 0 && (a == AV_NEGINF || a == AV_POSINF)) return a;
    return fin_a && b == AV_FINITE ? AV_FINITE : AV_UNKNOWN;
  case OP_NEG: return a == AV_NEGINF ? AV_POSINF : a == AV_POSINF ? AV_NEGINF : a;
  default: return fin_a && fin_b ? AV_FINITE : AV_UNKNOWN;
  }
}

/* Does "c (and c2, if not NULL) false on the whole tile" leave every state
   of the pass unchanged?  (A pass that stores per-tile outputs must visit
   every tile.) */
static bool neutral_when_false(LP *L, const Node *c, const Node *c2, int pass) {
  for (int i = 0; i < L->pk->outs.len; i++)
    if (pk_varies(L->pk, L->pk->outs.data[i])) return false;
  bool any = false;
  for (int s = 0; s < L->pk->nstates; s++) {
    const PState *st = &L->pk->states[s];
    if (st->pass != pass) continue;
    any = true;
    const Node *r = st->node;
    AVal v = aval(L, r->in[0], c, c2, st);
    if (v != aval_of(op_monoid(r->op)->identity)) return false; /* not its identity */
  }
  return any;
}

/* The comparison of indices a mask c amounts to, and its op (*op): c itself
   (lt, le, gt, ge), or, through a float mask, the comparison p of
   cmp(select(p, A, B), T) for constants A, B and T (either side), where
   cmp(A, T) holds and cmp(B, T) does not (select(j <= i, 1, 0) > 0.5 is
   j <= i), and p negated where the reverse (its op turned: lt <-> ge,
   le <-> gt).  *op is always lt, le, gt or ge.  NULL for anything else. */
static const Node *mask_pred(const PKernel *pk, const Node *c, Op *op) {
  if (!pk->member[c->id] || op_info[c->op].cls != OPC_COMPARE) return NULL;
  for (int side = 0; side < 2; side++) {
    const Node *sel = c->in[side], *t = c->in[1 - side];
    if (sel->op != OP_SELECT || t->op != OP_CONST || sel->in[1]->op != OP_CONST || sel->in[2]->op != OP_CONST) continue;
    double a = sel->in[1]->value, b = sel->in[2]->value, v = t->value;
    bool ta = side == 0 ? op_compare(c->op, a, v) : op_compare(c->op, v, a);
    bool tb = side == 0 ? op_compare(c->op, b, v) : op_compare(c->op, v, b);
    if (ta == tb) return NULL;
    const Node *q = mask_pred(pk, sel->in[0], op);
    if (q && !ta) *op = op_compare_not(*op);
    return q;
  }
  if (c->op != OP_LT && c->op != OP_LE && c->op != OP_GT && c->op != OP_GE) return NULL;
  *op = c->op;
  return c;
}

/* The affine form d (over the tile's i, j and the loop's k) of select sel's
   mask, its comparison *cop and the row tile *ti; false if the mask is not
   a comparison of affine indices. */
static bool mask_form(LP *L, const Node *sel, Aff *d, Op *cop, int64_t *ti) {
  PKernel *pk = L->pk;
  int s = pk->stream;
  const Node *pc = mask_pred(pk, sel->in[0], cop);
  if (!pc) return false;
  int rowax = -1;
  for (int q = 0; q < pc->shape.rank; q++) {
    int a = pk->dimax[pc->id][q];
    if (a >= 0 && a != s && extent(L, a) > 1) rowax = a;
  }
  int8_t dom[2] = {(int8_t)rowax, (int8_t)s};
  if (rowax < 0) dom[0] = (int8_t)s, dom[1] = -1;
  set_dom(L, dom);
  SExpr *idx[TS_MAX_RANK];
  member_idx(L, pc, idx);
  SExpr *e = value_of(L, pc, idx, true);
  if (L->failed || e->kind != SX_OP || e->n != 2) return false;
  *d = (Aff){0, 0, 0, I(L, 0)};
  if (!aff_of(L, e->a[0], 1, d) || !aff_of(L, e->a[1], -1, d)) return false;
  if (rowax < 0) d->cj = d->ci, d->ci = 0; /* the stream is i in that domain */
  *ti = rowax >= 0 ? extent(L, rowax) : 1;
  return true;
}

/* The tiles k on which the mask may hold somewhere: [0, *b) (returns 1),
   [*b, ∞) (returns -1), or every tile (0).  False everywhere on tile k
   <=> ck*k + Q >= 0. */
static int mask_range(LP *L, const Aff *d, Op cop, int64_t ti, SExpr **b) {
  int64_t tj = extent(L, L->pk->stream), ck;
  SExpr *Q;
  switch (cop) {
  case OP_LE: ck = d->ck, Q = IX(L, IX_SUB, extreme(L, d, ti, tj, false), I(L, 1)); break; /* min > 0 */
  case OP_LT: ck = d->ck, Q = extreme(L, d, ti, tj, false); break;                       /* min >= 0 */
  case OP_GE: ck = -d->ck, Q = IX(L, IX_SUB, I(L, -1), extreme(L, d, ti, tj, true)); break; /* max < 0 */
  default: ck = -d->ck, Q = IX(L, IX_SUB, I(L, 0), extreme(L, d, ti, tj, true)); break;    /* max <= 0 */
  }
  if (ck > 0) { /* false for k >= ceil(-Q / ck) */
    *b = IX(L, IX_DIV, IX(L, IX_MAX, I(L, 0), IX(L, IX_ADD, IX(L, IX_SUB, I(L, 0), Q), I(L, ck - 1))), I(L, ck));
    return 1;
  }
  if (ck < 0) { /* false for k <= floor(Q / -ck) */
    *b = IX(L, IX_DIV, IX(L, IX_MAX, I(L, 0), IX(L, IX_ADD, Q, I(L, -ck))), I(L, -ck));
    return -1;
  }
  return 0;
}

/* A chunk mask a / C == b / C (integer quotients: each query sees the keys
   of its own chunk of C positions, Llama 4's local layers): *a affine over
   the tile's rows alone, *b = j + tj·k the stream's index itself, C a
   positive constant; false for any other mask. */
static bool chunk_form(LP *L, const Node *sel, Aff *a, int64_t *C, int64_t *ti) {
  PKernel *pk = L->pk;
  int s = pk->stream;
  const Node *c = sel->in[0];
  if (!pk->member[c->id] || c->op != OP_EQ) return false;
  for (int q = 0; q < 2; q++) {
    const Node *d = c->in[q];
    if (d->op != OP_IDIV || d->in[1]->op != OP_CONST || !(d->in[1]->value > 0) ||
        d->in[1]->value != c->in[0]->in[1]->value)
      return false;
  }
  *C = (int64_t)c->in[0]->in[1]->value;
  int rowax = -1;
  for (int q = 0; q < c->shape.rank; q++) {
    int x = pk->dimax[c->id][q];
    if (x >= 0 && x != s && extent(L, x) > 1) rowax = x;
  }
  if (rowax < 0) return false;
  int8_t dom[2] = {(int8_t)rowax, (int8_t)s};
  set_dom(L, dom);
  SExpr *idx[TS_MAX_RANK];
  member_idx(L, c, idx);
  SExpr *e = value_of(L, c, idx, true);
  if (L->failed || e->kind != SX_OP || e->n != 2) return false;
  int64_t tj = extent(L, s);
  for (int q = 0; q < 2; q++) {
    const SExpr *d = e->a[q];
    if (d->kind != SX_OP || d->op != OP_IDIV || d->n != 2) return false;
    Aff f = {0, 0, 0, I(L, 0)};
    if (!aff_of(L, d->a[0], 1, &f)) return false;
    if (!f.cj && !f.ck) *a = f; /* the rows' side */
    else if (!(f.ci == 0 && f.cj == 1 && f.ck == tj && f.rest->kind == SX_INT && f.rest->i == 0)) return false;
  }
  *ti = extent(L, rowax);
  return true;
}

/* The key tiles [*lo, *hi) where the chunks of a row tile's queries meet
   those of the keys, and the condition that the whole tile is one chunk
   (the mask all true).  With A = a's range over the tile, the chunks
   floor(A / C) meet tile k's, [floor(tj k / C), floor((tj k + tj - 1) / C)],
   for ceil((floor(Amin / C) C - tj + 1) / tj) <= k < ceil((floor(Amax / C) +
   1) C / tj).  Numerators are clamped at 0 so that truncating and floor
   division agree (a negative Amin only widens the range: its tile bound is
   0 either way); the all-true test also asks Amin >= 0. */
static SExpr *chunk_tiles(LP *L, const Aff *a, int64_t C, int64_t ti, SExpr **lo, SExpr **hi) {
  int64_t tj = extent(L, L->pk->stream);
  SExpr *amin = IX(L, IX_MAX, I(L, 0), extreme(L, a, ti, tj, false));
  SExpr *amax = IX(L, IX_MAX, I(L, 0), extreme(L, a, ti, tj, true));
  SExpr *qmin = IX(L, IX_DIV, amin, I(L, C)), *qmax = IX(L, IX_DIV, amax, I(L, C));
  *lo = IX(L, IX_DIV, IX(L, IX_MAX, I(L, 0), IX(L, IX_MUL, qmin, I(L, C))), I(L, tj));
  *hi = IX(L, IX_DIV, IX(L, IX_ADD, IX(L, IX_MUL, IX(L, IX_ADD, qmax, I(L, 1)), I(L, C)), I(L, tj - 1)), I(L, tj));
  SExpr *k0 = IX(L, IX_MUL, sx_var(L->a, TV_K), I(L, tj));
  SExpr *bmin = IX(L, IX_DIV, k0, I(L, C)), *bmax = IX(L, IX_DIV, IX(L, IX_ADD, k0, I(L, tj - 1)), I(L, C));
  SExpr *one = IX(L, IX_AND, IX(L, IX_LT, qmax, IX(L, IX_ADD, bmin, I(L, 1))),
                  IX(L, IX_LT, bmax, IX(L, IX_ADD, qmin, I(L, 1))));
  return IX(L, IX_AND, IX(L, IX_LT, I(L, -1), extreme(L, a, ti, tj, false)), one);
}

/* The loop bounds of pass p, the tiles it may skip in between
   (L->gap_lo/gap_hi[p], NULL: none) and the "all true" conditions of its
   masks.  A select whose mask is false on a whole tile, where that leaves
   the pass's states as they are, bounds the loop; so does a pair that is
   an "or" of two masks, select(p1, x, select(p2, x, f)): a tile where
   both are false is skipped, and where p1 may hold only below one tile and
   p2 only from a later one (attention sinks beside a sliding window: the
   first keys, then the window), the tiles between are a gap the loop
   jumps over. */
static void find_masks(LP *L, int pass, SExpr **lo, SExpr **hi) {
  PKernel *pk = L->pk;
  int s = pk->stream;
  int64_t tj = extent(L, s);
  *lo = I(L, 0);
  *hi = I(L, cdiv(pk->ax[s].size, tj));
  L->gap_lo[pass] = L->gap_hi[pass] = NULL;
  L->nmask = 0;
  for (int i = 0; i < pk->members.len && L->nmask < 4; i++) {
    const Node *sel = pk->members.data[i];
    if (sel->op != OP_SELECT || !pk_varies(pk, sel)) continue;
    const Node *c = sel->in[0];
    Aff d;
    Op cop;
    int64_t ti, C;
    if (chunk_form(L, sel, &d, &C, &ti)) {
      SExpr *clo, *chi, *at = chunk_tiles(L, &d, C, ti, &clo, &chi);
      if (neutral_when_false(L, c, NULL, pass)) *lo = IX(L, IX_MAX, *lo, clo), *hi = IX(L, IX_MIN, *hi, chi);
      L->mask_sel[L->nmask] = sel;
      L->mask_true[L->nmask++] = at;
      continue;
    }
    if (!mask_form(L, sel, &d, &cop, &ti)) continue;
    SExpr *b;
    int side = 0;
    if (neutral_when_false(L, c, NULL, pass)) {
      side = mask_range(L, &d, cop, ti, &b);
      if (side > 0) *hi = IX(L, IX_MIN, *hi, b);
      if (side < 0) *lo = IX(L, IX_MAX, *lo, b);
    }
    const Node *sel2 = sel->in[2];
    Aff d2;
    Op cop2;
    int64_t ti2;
    if (!side && sel2->op == OP_SELECT && pk->member[sel2->id] && sel2->in[1] == sel->in[1] &&
        mask_form(L, sel2, &d2, &cop2, &ti2) && neutral_when_false(L, c, sel2->in[0], pass)) {
      SExpr *b2;
      int s1 = mask_range(L, &d, cop, ti, &b), s2 = mask_range(L, &d2, cop2, ti2, &b2);
      if (s1 < 0 && s2 > 0) { /* order them: the one that holds below first */
        SExpr *t = b;
        b = b2, b2 = t, s1 = 1, s2 = -1;
      }
      if (s1 > 0 && s2 > 0) *hi = IX(L, IX_MIN, *hi, IX(L, IX_MAX, b, b2));
      else if (s1 < 0 && s2 < 0) *lo = IX(L, IX_MAX, *lo, IX(L, IX_MIN, b, b2));
      else if (s1 > 0 && s2 < 0 && !L->gap_lo[pass]) L->gap_lo[pass] = b, L->gap_hi[pass] = b2;
    }
    /* all true on tile k */
    SExpr *kk = IX(L, IX_MUL, sx_var(L->a, TV_K), I(L, d.ck)), *at;
    switch (cop) {
    case OP_LE: at = IX(L, IX_LT, IX(L, IX_ADD, kk, extreme(L, &d, ti, tj, true)), I(L, 1)); break;
    case OP_LT: at = IX(L, IX_LT, IX(L, IX_ADD, kk, extreme(L, &d, ti, tj, true)), I(L, 0)); break;
    case OP_GE: at = IX(L, IX_LT, I(L, -1), IX(L, IX_ADD, kk, extreme(L, &d, ti, tj, false))); break;
    default: at = IX(L, IX_LT, I(L, 0), IX(L, IX_ADD, kk, extreme(L, &d, ti, tj, false))); break;
    }
    L->mask_sel[L->nmask] = sel;
    L->mask_true[L->nmask++] = at;
  }
}

/* ---- states ---- */

/* The exponent of a law state's rescale from the dependence's old value to
   its new one: c·(old − new) for a max (c·(new − old) for a min), times
   the row's factor F where the law has one.  F is positive but 0 where it
   underflowed (exp of a very negative value), and 0·(−∞) is NaN: where old
   is still the identity (nothing seen: the state, or a chunk's partial, is
   0) the exponent is −∞, a number either way.  The loop's rescale and the
   combine's merge of split partials both take it from here. */
static SExpr *law_exponent(LP *L, const PState *st, SExpr *old, SExpr *now, SExpr *F) {
  const Node *D = st->dep;
  SExpr *diff = D->op == OP_AMAX ? OPX(L, OP_SUB, EK_REAL, old, now) : OPX(L, OP_SUB, EK_REAL, now, old);
  if (st->law_c != 1) diff = OPX(L, OP_MUL, EK_REAL, diff, sx_real(L->a, st->law_c));
  if (!F) return diff;
  SExpr *none = OPX(L, OP_EQ, EK_BOOL, old, sx_real(L->a, op_monoid(D->op)->identity));
  SExpr *args[3] = {none, sx_real(L->a, -INFINITY), OPX(L, OP_MUL, EK_REAL, diff, F)};
  return sx_op(L->a, OP_SELECT, EK_REAL, args, 3);
}

static void update_lanes(LP *L, int si);

static void update_state(LP *L, int si) {
  PState *st = &L->pk->states[si];
  const Node *r = st->node;
  tile_cover(L->a, L->k, r);
  if (L->lane[si]) {
    if (L->lane[si] == 1) update_lanes(L, si);
    return;
  }
  L->st = st;
  for (int i = 0; i < st->ndrop; i++) {
    L->sub[st->drop[i].n->id] = SUB_KEEP;
    L->sub_keep[st->drop[i].n->id] = (int8_t)st->drop[i].keep;
  }
  if (st->dep && st->shift) {
    /* Chan's merge: the state grows by c² n_old (m_old - m_new)² =
       c² (S_old - n_old S_new / n_new)² / n_old (0 before the first tile),
       then this tile's terms use m_new (S read through SUB_MEAN) */
    const Node *S = st->dep;
    int di = state_index(L, S);
    int8_t sax[2] = {L->tax[r->id][0], L->tax[r->id][1]};
    set_dom(L, sax);
    SExpr *row = sax[0] >= 0 ? coord(L, sax[0]) : I(L, 0);
    SExpr *prev = sx_tile(L->a, L->prev[di], row, NULL), *cur = sx_tile(L->a, L->tile[S->id], row, NULL);
    SExpr *nold = seen_count(L, 0), *nnew = seen_count(L, 1);
    SExpr *dev = OPX(L, OP_SUB, EK_REAL, prev, OPX(L, OP_DIV, EK_REAL, OPX(L, OP_MUL, EK_REAL, nold, cur), nnew));
    SExpr *sq = OPX(L, OP_MUL, EK_REAL, dev, dev);
    if (st->law_c != 1) sq = OPX(L, OP_MUL, EK_REAL, sq, sx_real(L->a, st->law_c * st->law_c));
    SExpr *den = OPX(L, OP_MAX, EK_REAL, nold, sx_real(L->a, 1));
    Stmt *sc = emit(L, ST_MAP);
    sc->dst = L->tile[r->id];
    sc->value = OPX(L, OP_ADD, EK_REAL, tile_read(L, r), OPX(L, OP_DIV, EK_REAL, sq, den));
    L->sub[S->id] = SUB_MEAN;
  } else if (st->dep) {
    /* the rescale exp(c * (D_prev - D_safe)) (max; min the other way), then state *= rho */
    const Node *D = st->dep;
    int di = state_index(L, D);
    int8_t dax[2] = {L->tax[D->id][0], L->tax[D->id][1]};
    L->sub[D->id] = SUB_SAFE;
    /* one rescale tile per (state, c) this iteration */
    int twin = -1;
    for (int j = 0; j < si; j++)
      if (L->pk->states[j].pass == st->pass && L->pk->states[j].dep == D && L->pk->states[j].law_c == st->law_c &&
          L->pk->states[j].law_f == st->law_f)
        twin = j;
    if (twin >= 0) {
      L->rho[si] = L->rho[twin];
    } else {
      if (st->law_f) ensure_inputs(L, st->law_f, false); /* a row's factor: computed before the loop */
      L->rho[si] = new_tile(L, "rho", SCOPE_FRAGMENT, DT_F32, dax, false);
      set_dom(L, dax);
      SExpr *prev = sx_tile(L->a, L->prev[di], dax[0] >= 0 ? sx_var(L->a, TV_I) : I(L, 0), NULL);
      SExpr *safe = hook(&(Pw){.ud = L}, D, NULL, false), *F = NULL;
      if (st->law_f) {
        SExpr *fi[TS_MAX_RANK];
        member_idx(L, st->law_f, fi);
        F = value_of(L, st->law_f, fi, false);
      }
      emit_map(L, L->rho[si], dax, NULL, NULL, OPX(L, OP_EXP, EK_REAL, law_exponent(L, st, prev, safe, F), NULL), 0.0);
    }
    int8_t sax[2] = {L->tax[r->id][0], L->tax[r->id][1]};
    set_dom(L, sax);
    SExpr *rr = sx_tile(L->a, L->rho[si], dax[0] >= 0 ? coord(L, dax[0]) : I(L, 0), NULL);
    Stmt *sc = emit(L, ST_MAP);
    sc->dst = L->tile[r->id];
    sc->value = OPX(L, OP_MUL, EK_REAL, tile_read(L, r), rr);
  }
  if (r->op == OP_MATMUL) {
    emit_product(L, r, L->tile[r->id]);
  } else {
    TBuf *src = reduce_source(L, r);
    if (src) {
      if (L->prev[si]) { /* others rescale against this max: keep its previous value */
        int8_t ax[2] = {L->tax[r->id][0], L->tax[r->id][1]};
        set_dom(L, ax);
        Stmt *cp = emit(L, ST_MAP);
        cp->dst = L->prev[si];
        cp->value = tile_read(L, r);
      }
      Stmt *red = emit(L, ST_REDUCE);
      red->dst = L->tile[r->id], red->a = src, red->reduce_op = r->op, red->clear = false, red->of = r;
      red->nan_ok = L->nan_ok[si];
    }
  }
  for (int i = 0; i < st->ndrop; i++) L->sub[st->drop[i].n->id] = SUB_NONE;
  if (st->dep) L->sub[st->dep->id] = SUB_NONE;
  L->st = NULL;
}

/* ---- lane-wise Welford ----

   Layer norm's mean S = sum_j y_j and mean-shifted sum of squares Q =
   sum_j (c (y_j - S/n))^2 streamed together (stream.c's shift law) fold
   each tile into their row states every trip: two reductions across
   threads a trip, and Chan's correction between them.  Where every lane
   (an element (i, j) of the tile) sees one element a trip and nothing in
   the loop reads the two states, each lane instead keeps its own sum and
   its own sum of squares about its own running mean (Welford's update,
   one element at a time: Q_l += t/(t+1) (y - S_l/t)^2, S_l += y, t the
   elements the lane has seen), and after the loop the lanes of a row
   merge by Chan's rule, all with the same count T:

     S = sum_l S_l,   Q = c^2 (sum_l Q_l + T sum_l (S_l/T - S/(T L))^2)

   (L lanes a row).  Exact over the reals; in floating point it keeps
   Welford's stability (no sum of squares minus a square), and the loop
   holds no reduction across threads (as defer.c does for a sum nothing in
   the loop reads).  The lanes live in registers across trips: two tiles
   of at most TILE_DEFER_REGS elements a thread each.  The merge in a
   split stream's combine is unchanged: the states after the loop are
   what the per-trip form leaves. */

/* Decide the lane pairs of the kernel (before its states are filled). */
static void lane_pairs(LP *L) {
  PKernel *pk = L->pk;
  int s = pk->stream;
  for (int i = 0; i < pk->nstates; i++) L->lane[i] = 0, L->lane_mate[i] = -1;
  if (s < 0 || pk->nmasks > 0 || pk->ax[s].size % pk->ax[s].tile) return;
  if (L->chunk0 && !L->chunk_rel) return; /* uneven chunks: trips differ between blocks */
  L->lane_trips = L->chunk0 ? L->per : pk->ax[s].size / pk->ax[s].tile;
  for (int qi = 0; qi < pk->nstates; qi++) {
    const PState *q = &pk->states[qi];
    if (!q->shift || !q->dep || q->node->op != OP_SUM) continue;
    int si = state_index(L, q->dep);
    if (si < 0 || si > qi || L->lane[si] || pk->states[si].pass != q->pass || pk->states[si].dep) continue;
    bool alone = true; /* nothing else in the pass rescales or shifts against S or Q */
    for (int j = 0; j < pk->nstates; j++)
      if (j != qi && (pk->states[j].dep == q->dep || pk->states[j].dep == q->node)) alone = false;
    int8_t keep[2];
    if (!alone || tile_axes(L, q->dep, keep) > 1 || tile_axes(L, q->node, keep) > 1) continue;
    int64_t rows = keep[0] >= 0 ? extent(L, keep[0]) : 1;
    int threads = pk->threads ? pk->threads : 128;
    int64_t warps = rows / 16 > 0 ? rows / 16 : 1; /* assemble's cap: a warp owns 16 rows */
    if (threads > 32 * warps) threads = (int)(32 * warps);
    if (rows * pk->ax[s].tile > (int64_t)TILE_DEFER_REGS * threads) continue;
    L->lane[si] = 1, L->lane[qi] = 2;
    L->lane_mate[si] = qi, L->lane_mate[qi] = si;
  }
}

/* S's update in a trip of the loop, for its pair: Q's lanes from S's lanes
   as they were, then S's lanes */
static void update_lanes(LP *L, int si) {
  const Node *r = L->pk->states[si].node;
  int qi = L->lane_mate[si];
  TBuf *y = reduce_source(L, r);
  if (!y) return;
  int8_t keep[2];
  tile_axes(L, r, keep);
  int8_t ax[2] = {keep[0], (int8_t)L->pk->redax[r->id]};
  int saved = L->cur;
  L->cur = L_PRE;
  for (int w = 0; w < 2; w++) {
    int i = w ? qi : si;
    L->lane_tile[i] = new_tile(L, w ? "LQ" : "LS", SCOPE_FRAGMENT, DT_F32, ax, true);
    Stmt *f = emit(L, ST_FILL);
    f->dst = L->lane_tile[i];
    f->value = sx_real(L->a, 0);
  }
  L->cur = saved;
  set_dom(L, ax);
  TBuf *ls = L->lane_tile[si], *lq = L->lane_tile[qi];
  SExpr *I_ = sx_var(L->a, TV_I), *J_ = sx_var(L->a, TV_J);
  SExpr *yv = sx_tile(L->a, y, I_, J_), *sv = sx_tile(L->a, ls, I_, J_), *qv = sx_tile(L->a, lq, I_, J_);
  /* the trip's two factors, 1/max(t, 1) and t/(t+1), are the same for every
     element (the compilers hoist them) */
  SExpr *k = sx_var(L->a, TV_K);
  SExpr *inv = OPX(L, OP_DIV, EK_REAL, sx_real(L->a, 1), OPX(L, OP_CAST, EK_REAL, IX(L, IX_MAX, k, I(L, 1)), NULL));
  SExpr *dev = OPX(L, OP_SUB, EK_REAL, yv, OPX(L, OP_MUL, EK_REAL, sv, inv));
  SExpr *w = OPX(L, OP_DIV, EK_REAL, OPX(L, OP_CAST, EK_REAL, k, NULL), OPX(L, OP_CAST, EK_REAL, IX(L, IX_ADD, k, I(L, 1)), NULL));
  Stmt *mq = emit(L, ST_MAP);
  mq->dst = lq;
  mq->value = OPX(L, OP_ADD, EK_REAL, qv, OPX(L, OP_MUL, EK_REAL, w, OPX(L, OP_MUL, EK_REAL, dev, dev)));
  Stmt *ms = emit(L, ST_MAP);
  ms->dst = ls;
  ms->value = OPX(L, OP_ADD, EK_REAL, sv, yv);
}

/* After pass p's loop: each pair's lanes merged into its two states. */
static void merge_lanes(LP *L, int p) {
  int saved = L->cur;
  L->cur = list_after(p);
  for (int si = 0; si < L->pk->nstates; si++) {
    if (L->lane[si] != 1 || L->pk->states[si].pass != p || !L->lane_tile[si]) continue;
    int qi = L->lane_mate[si];
    const PState *q = &L->pk->states[qi];
    const Node *S = L->pk->states[si].node, *Q = q->node;
    TBuf *ls = L->lane_tile[si], *lq = L->lane_tile[qi];
    double T = (double)L->lane_trips, lanes = (double)ls->shape.d[1].n;
    Stmt *rs = emit(L, ST_REDUCE);
    rs->dst = L->tile[S->id], rs->a = ls, rs->reduce_op = OP_SUM, rs->clear = false, rs->of = S, rs->deferred = true;
    SExpr *I_ = sx_var(L->a, TV_I), *J_ = sx_var(L->a, TV_J);
    SExpr *row = L->tile[S->id]->shape.d[0].n > 1 ? I_ : I(L, 0);
    SExpr *mean = OPX(L, OP_MUL, EK_REAL, sx_tile(L->a, L->tile[S->id], row, NULL), sx_real(L->a, 1 / (T * lanes)));
    SExpr *d = OPX(L, OP_SUB, EK_REAL, OPX(L, OP_MUL, EK_REAL, sx_tile(L->a, ls, I_, J_), sx_real(L->a, 1 / T)), mean);
    SExpr *v = OPX(L, OP_ADD, EK_REAL, sx_tile(L->a, lq, I_, J_),
                   OPX(L, OP_MUL, EK_REAL, sx_real(L->a, T), OPX(L, OP_MUL, EK_REAL, d, d)));
    if (q->law_c * q->law_c != 1) v = OPX(L, OP_MUL, EK_REAL, v, sx_real(L->a, q->law_c * q->law_c));
    Stmt *mq = emit(L, ST_MAP);
    mq->dst = lq;
    mq->value = v;
    Stmt *rq = emit(L, ST_REDUCE);
    rq->dst = L->tile[Q->id], rq->a = lq, rq->reduce_op = OP_SUM, rq->clear = false, rq->of = Q, rq->deferred = true;
  }
  L->cur = saved;
}

/* ---- grid ---- */

typedef struct GridAx { int axis; int64_t count; } GridAx;

/* Place block axes on CUDA's grid, gx[0] innermost (x): one grid dimension
   each for the first two, the rest folded into z; when y or z would exceed
   65535 blocks, all fold into x. */
static bool grid_place(LP *L, const GridAx *gx, int n, SExpr **bidx) {
  int64_t *grid = L->k->grid;
  int dim_of[PLAN_MAX_AXES + 1];
  int64_t cnt[3] = {1, 1, 1};
  for (int i = 0; i < n; i++) dim_of[i] = i < 2 ? i : 2, cnt[dim_of[i]] *= gx[i].count;
  if (cnt[1] > 65535 || cnt[2] > 65535) {
    cnt[0] = 1, cnt[1] = cnt[2] = 1;
    for (int i = 0; i < n; i++) dim_of[i] = 0, cnt[0] *= gx[i].count;
  }
  if (cnt[0] > 2147483647) return false;
  static const TVar bv[3] = {TV_BX, TV_BY, TV_BZ};
  int64_t stride[3] = {1, 1, 1};
  for (int i = 0; i < n; i++) {
    int d = dim_of[i];
    SExpr *b = sx_var(L->a, bv[d]);
    if (stride[d] > 1) b = IX(L, IX_DIV, b, I(L, stride[d]));
    if (stride[d] * gx[i].count < cnt[d]) b = IX(L, IX_MOD, b, I(L, gx[i].count));
    bidx[i] = b;
    stride[d] *= gx[i].count;
  }
  for (int d = 0; d < 3; d++) grid[d] = cnt[d];
  return true;
}

/* ---- a fused kernel ---- */

static void store_output(LP *L, const Node *o) {
  int8_t ax[2];
  tile_axes(L, o, ax);
  /* one axis that is the output's last dimension: a row, stored along j
     (as [1, n], the layout its row statistics were computed in) */
  if (ax[0] >= 0 && ax[1] < 0 && o->shape.rank >= 1 && L->pk->dimax[o->id][o->shape.rank - 1] == ax[0])
    ax[1] = ax[0], ax[0] = -1;
  OpClass oc = op_info[o->op].cls;
  if ((oc == OPC_REDUCE || oc == OPC_MATMUL) && !state_info(L, o)) ensure(L, o);
  else ensure_inputs(L, o, true);
  set_dom(L, ax);
  Stmt *st = emit(L, ST_STORE);
  SExpr *idx[TS_MAX_RANK];
  member_idx(L, o, idx);
  const Node *view = NULL; /* stored through a reshape (axes.c): its global, at the same flat offset */
  for (int i = 0; i < L->pk->views.len; i++)
    if (L->pk->outs.data[i] == o && L->pk->views.data[i]) view = L->pk->views.data[i];
  const Node *as = view ? view : o;
  st->global = L->tp->of_node[as->id];
  st->ngidx = as->shape.rank;
  st->gidx = arena_alloc(L->a, sizeof(SExpr *) * (size_t)(as->shape.rank ? as->shape.rank : 1));
  if (view) {
    tile_reshape_index(L->a, idx, &o->shape, &view->shape, st->gidx);
  } else {
    memcpy(st->gidx, idx, sizeof(SExpr *) * (size_t)o->shape.rank);
  }
  st->value = value_of(L, o, idx, true);
  if (state_info(L, o)) st->value = state_value(L, o);
  st->mask = dom_mask(L, ax);
  st->ext[0] = ax[0] >= 0 ? extent(L, ax[0]) : 1;
  st->ext[1] = ax[1] >= 0 ? extent(L, ax[1]) : 1;
}

/* the fewest rows of any product's tile in the kernel */
static bool min_rows(const Stmt *s, int depth, void *ud) {
  (void)depth;
  int64_t *m = ud;
  if (s->kind == ST_GEMM && s->dst->shape.d[0].n < *m) *m = s->dst->shape.d[0].n;
  return true;
}

/* the kernel's statements: pre, then each pass's loop and what follows it */
static void assemble(LP *L, Kernel *k, SExpr **lo, SExpr **hi) {
  PKernel *pk = L->pk;
  for (int i = 0; i < L->lists[L_PRE].len; i++) vec_push(L->a, &k->body, L->lists[L_PRE].data[i]);
  for (int p = 0; pk->stream >= 0 && p < pk->npasses; p++) {
    Stmt *lp = arena_alloc(L->a, sizeof *lp);
    lp->kind = ST_LOOP;
    lp->var = TV_K;
    lp->lo = lo[p];
    lp->hi = hi[p];
    lp->stages = pk->stages ? pk->stages : 2;
    lp->body = L->lists[list_body(p)];
    if (L->gap_lo[p]) {
      /* the loop counts the tiles it visits, t in [lo, hi - w); tile k = t
         below the gap [g0, g0 + w), t + w from it on */
      SExpr *g0 = IX(L, IX_MIN, IX(L, IX_MAX, L->gap_lo[p], lo[p]), hi[p]);
      SExpr *w = IX(L, IX_SUB, IX(L, IX_MIN, IX(L, IX_MAX, L->gap_hi[p], g0), hi[p]), g0);
      SExpr *t = sx_var(L->a, TV_K);
      SExpr *past = IX(L, IX_MIN, IX(L, IX_MAX, IX(L, IX_ADD, IX(L, IX_SUB, t, g0), I(L, 1)), I(L, 0)), I(L, 1));
      SExpr *repl[TV_COUNT] = {0};
      repl[TV_K] = IX(L, IX_ADD, t, IX(L, IX_MUL, past, w));
      tile_subst_list(L->a, &lp->body, repl);
      lp->hi = IX(L, IX_SUB, hi[p], w);
    }
    vec_push(L->a, &k->body, lp);
    StmtList *after = &L->lists[list_after(p)];
    for (int i = 0; i < after->len; i++) vec_push(L->a, &k->body, after->data[i]);
  }
  /* a warp owns 16 rows of a product (whole rows: reductions read them) */
  int64_t rows = INT64_MAX;
  tile_walk(&k->body, min_rows, &rows);
  if (rows != INT64_MAX && k->threads > 32 * (rows / 16 > 0 ? rows / 16 : 1))
    k->threads = (int)(32 * (rows / 16 > 0 ? rows / 16 : 1));
  vec_push(L->a, &L->tp->kernels, k);
}

/* ---- split streams ---- */

/* Node n's values at this block's chunk into a new scratch buffer [splits,
   n's shape...] (float32, named prefix%id_op), over the tile axes of `like`
   (n's own, or for a row factor its state's): its tile as it is (tile) or
   its value computed there; NULL after lp_fail. */
static TBuf *store_partial(LP *L, const char *prefix, const Node *n, const Node *like, bool tile, SExpr *chunk,
                           int64_t splits) {
  Shape sh = n->shape;
  if (sh.rank + 1 > TS_MAX_RANK) {
    lp_fail(L, "a value of rank 8 cannot be split into partials");
    return NULL;
  }
  memmove(&sh.d[1], &sh.d[0], sizeof(Dim) * (size_t)sh.rank);
  sh.d[0] = (Dim){splits, NULL};
  sh.rank++;
  TBuf *buf = tile_scratch_buf(L->tp, arena_printf(L->a, "%s%d_%s", prefix, n->id, op_info[n->op].name), &sh, DT_F32, NAN);
  int8_t ax[2] = {L->tax[like->id][0], L->tax[like->id][1]};
  set_dom(L, ax);
  Stmt *st = emit(L, ST_STORE);
  st->global = buf;
  st->ngidx = sh.rank;
  st->gidx = arena_alloc(L->a, sizeof(SExpr *) * (size_t)sh.rank);
  st->gidx[0] = chunk;
  member_idx(L, n, st->gidx + 1);
  if (tile) {
    st->value = tile_read(L, n);
  } else {
    SExpr *idx[TS_MAX_RANK];
    member_idx(L, n, idx);
    st->value = value_of(L, n, idx, false);
  }
  st->mask = dom_mask(L, ax);
  st->ext[0] = L->tile[like->id]->shape.d[0].n;
  st->ext[1] = L->tile[like->id]->shape.rank == 2 ? L->tile[like->id]->shape.d[1].n : 1;
  return buf;
}

/* Each state's raw tile (no post factors) into its scratch partial buffer
   [splits, state's shape...], float32, at this block's chunk; and a law's
   factor per row (exp(F·c·(y − D))): the combine rescales each chunk by
   exp(F·c·(D_chunk − D)) and cannot compute F, so each chunk stores it too
   (the same value: the combine reads chunk 0's). */
static void store_partials(LP *L, SExpr *chunk, int64_t splits) {
  PKernel *pk = L->pk;
  for (int i = 0; i < pk->nstates && !L->failed; i++) {
    const Node *r = pk->states[i].node;
    L->part[i] = store_partial(L, "part", r, r, true, chunk, splits);
  }
  for (int i = 0; i < pk->nstates && !L->failed; i++) {
    const PState *ps = &pk->states[i];
    L->partf[i] = NULL;
    if (!ps->law_f) continue;
    for (int j = 0; j < i && !L->partf[i]; j++) /* states sharing the factor share its buffer */
      if (pk->states[j].law_f == ps->law_f) L->partf[i] = L->partf[j];
    if (L->partf[i]) continue;
    ensure_inputs(L, ps->law_f, false);
    L->partf[i] = store_partial(L, "partf", ps->law_f, ps->dep, false, chunk, splits);
  }
}

/* The combine kernel's own tiles of the grid axes.  It merges partials
   that are in memory, elementwise: no product tile constrains it, and the
   main kernel's blocks (a 128x128 product tile: 4 blocks for a 256x256
   split-K output, reading 8 MB of partials) leave most SMs idle.  Halve
   the largest tile (the contiguous last dimension while it is over 64
   elements, the others first) until the blocks number twice the SMs and
   a block holds at most 8 elements a thread, or it holds one (a row an
   output reduces, held whole, counts in full). */
enum { COMBINE_THREADS = 128, COMBINE_UNROLL = 8, COMBINE_PER_THREAD = 8 };
static void combine_tiles(LP *L) {
  PKernel *pk = L->pk;
  int sms = L->p->sms > 0 ? L->p->sms : 132;
  int r = pk->root->shape.rank;
  int last = r >= 1 ? pk->dimax[pk->root->id][r - 1] : -1;
  for (;;) {
    double blocks = 1, elems = 1;
    int pick = -1;
    for (int a = 0; a < pk->naxes; a++) {
      if (pk->ax[a].role == AX_WHOLE && pk->ax[a].in_output) elems *= (double)pk->ax[a].tile; /* a row its outputs span */
      if (pk->ax[a].role != AX_GRID) continue;
      blocks *= (double)cdiv(pk->ax[a].size, pk->ax[a].tile);
      elems *= (double)pk->ax[a].tile;
      bool can = pk->ax[a].tile > (a == last ? 64 : 1);
      if (can && (pick < 0 || (pick == last) || (a != last && pk->ax[a].tile > pk->ax[pick].tile))) pick = a;
    }
    bool enough = blocks >= 2.0 * sms && elems <= COMBINE_PER_THREAD * COMBINE_THREADS;
    if (pick < 0 || enough || elems <= COMBINE_THREADS) return;
    pk->ax[pick].tile = cdiv(pk->ax[pick].tile, 2);
  }
}

/* The combine kernel: merge each state's partials over the chunks by its
   monoid (a max first, then the states rescaled against it by the law:
   exp(c * (D_chunk - D)), 0 for an all -inf chunk), then the outputs. */
static bool lower_combine_tiled(LP *L, int64_t splits);
static bool lower_combine(LP *L, int64_t splits) {
  PKernel *pk = L->pk;
  int64_t main_tile[PLAN_MAX_AXES];
  for (int a = 0; a < pk->naxes; a++) main_tile[a] = pk->ax[a].tile;
  combine_tiles(L);
  bool ok = lower_combine_tiled(L, splits);
  for (int a = 0; a < pk->naxes; a++) pk->ax[a].tile = main_tile[a];
  return ok;
}

static bool lower_combine_tiled(LP *L, int64_t splits) {
  PKernel *pk = L->pk;
  Kernel *main = L->k;
  Kernel *k = arena_alloc(L->a, sizeof *k);
  L->k = k;
  k->kind = KERNEL_COMBINE;
  k->name = arena_printf(L->a, "k%d_combine_%s", L->tp->kernels.len, op_info[pk->root->op].name);
  k->threads = COMBINE_THREADS;
  k->node = pk->root;
  for (int i = 0; i < main->covers.len; i++) tile_cover(L->a, k, main->covers.data[i]);
  for (int i = 0; i < NLISTS; i++) L->lists[i].len = 0;
  for (int i = 0; i < L->nn; i++) L->tile[i] = NULL, L->tlist[i] = -1;
  L->noptiles = 0;
  /* the same blocks, without the chunks */
  GridAx gx[PLAN_MAX_AXES];
  int ng = 0;
  bool placed[PLAN_MAX_AXES] = {0};
  const Node *root = pk->root;
  for (int d = root->shape.rank - 1; d >= 0; d--) {
    int a = pk->dimax[root->id][d];
    if (a >= 0 && pk->ax[a].role == AX_GRID && !placed[a]) placed[a] = true, gx[ng++] = (GridAx){a, cdiv(pk->ax[a].size, pk->ax[a].tile)};
  }
  for (int a = 0; a < pk->naxes; a++)
    if (pk->ax[a].role == AX_GRID && !placed[a]) gx[ng++] = (GridAx){a, cdiv(pk->ax[a].size, pk->ax[a].tile)};
  SExpr *bidx[PLAN_MAX_AXES];
  if (!grid_place(L, gx, ng, bidx)) {
    lp_fail(L, "more blocks than CUDA's grid holds");
    return false;
  }
  for (int i = 0; i < ng; i++) L->base[gx[i].axis] = IX(L, IX_MUL, bidx[i], I(L, pk->ax[gx[i].axis].tile));
  L->cur = L_PRE;
  /* U chunks a trip: U independent loads in flight per thread (one a trip
     left the merge waiting on HBM's latency each trip), at most 32 values
     a thread in flight (Triton holds each statement's whole tile load in
     registers) */
  double per_thread = 1;
  for (int a = 0; a < pk->naxes; a++)
    if (pk->ax[a].role == AX_GRID || (pk->ax[a].role == AX_WHOLE && pk->ax[a].in_output)) per_thread *= (double)pk->ax[a].tile;
  per_thread /= COMBINE_THREADS;
  int64_t U = 1;
  while (U < COMBINE_UNROLL && splits % (2 * U) == 0 && 2 * U * per_thread <= 4 * COMBINE_PER_THREAD) U *= 2;
  Stmt *loops[2];
  for (int q = 0; q < 2; q++) {
    loops[q] = arena_alloc(L->a, sizeof *loops[q]);
    loops[q]->kind = ST_LOOP;
    loops[q]->var = TV_K;
    loops[q]->lo = I(L, 0);
    loops[q]->hi = I(L, splits / U);
  }
  for (int i = 0; i < pk->nstates; i++) {
    const PState *st = &pk->states[i];
    const Node *r = st->node;
    int8_t ax[2] = {L->tax[r->id][0], L->tax[r->id][1]};
    TBuf *t = new_tile(L, "S", SCOPE_FRAGMENT, DT_F32, ax, is_prod(r));
    L->tile[r->id] = t;
    Stmt *f = emit(L, ST_FILL);
    f->dst = t;
    f->value = sx_real(L->a, op_monoid(r->op)->identity);
    SExpr *terms[COMBINE_UNROLL];
    for (int64_t u = 0; u < U; u++) {
      /* part[k U + u, idx...] */
      SExpr *chunk = IX(L, IX_ADD, IX(L, IX_MUL, sx_var(L->a, TV_K), I(L, U)), I(L, u));
      set_dom(L, ax);
      SExpr *gi[TS_MAX_RANK + 1];
      gi[0] = chunk;
      member_idx(L, r, gi + 1);
      SExpr *part = sx_load(L->a, L->part[i], gi, r->shape.rank + 1);
      if (!st->dep) {
        terms[u] = part;
        continue;
      }
      /* the dependence's partial of this chunk */
      int di = state_index(L, st->dep);
      SExpr *gd[TS_MAX_RANK + 1];
      set_dom(L, ax);
      gd[0] = chunk;
      member_idx(L, st->dep, gd + 1);
      SExpr *pd = sx_load(L->a, L->part[di], gd, st->dep->shape.rank + 1);
      if (st->shift) {
        /* Chan's merge about the global mean m = S / n: the chunk's squares
           about its own mean m_c = S_c / n_c, plus c² n_c (m_c - m)² =
           c² (S_c - n_c S / n)² / n_c (0 for an empty chunk) */
        int64_t n = pk->ax[pk->stream].size;
        SExpr *first = IX(L, IX_MUL, chunk, I(L, L->per));
        SExpr *nc = OPX(L, OP_CAST, EK_REAL,
                        IX(L, IX_SUB, stream_prefix(L, IX(L, IX_ADD, first, I(L, L->per))), stream_prefix(L, first)), NULL);
        SExpr *dev = OPX(L, OP_SUB, EK_REAL, pd,
                         OPX(L, OP_MUL, EK_REAL, nc, OPX(L, OP_DIV, EK_REAL, tile_read(L, st->dep), sx_real(L->a, (double)n))));
        SExpr *sq = OPX(L, OP_MUL, EK_REAL, dev, dev);
        if (st->law_c != 1) sq = OPX(L, OP_MUL, EK_REAL, sq, sx_real(L->a, st->law_c * st->law_c));
        terms[u] = OPX(L, OP_ADD, EK_REAL, part, OPX(L, OP_DIV, EK_REAL, sq, OPX(L, OP_MAX, EK_REAL, nc, sx_real(L->a, 1))));
        continue;
      }
      /* rescaled against the merged dependence: part exp(c (D_chunk - D)) */
      L->sub[st->dep->id] = SUB_SAFE;
      SExpr *safe = hook(&(Pw){.ud = L}, st->dep, NULL, false);
      L->sub[st->dep->id] = SUB_NONE;
      SExpr *F = NULL;
      if (st->law_f) { /* the row's factor, as chunk 0 stored it */
        SExpr *gf[TS_MAX_RANK + 1];
        gf[0] = I(L, 0);
        member_idx(L, st->law_f, gf + 1);
        F = sx_load(L->a, L->partf[i], gf, st->law_f->shape.rank + 1);
      }
      terms[u] = OPX(L, OP_MUL, EK_REAL, part, OPX(L, OP_EXP, EK_REAL, law_exponent(L, st, pd, safe, F), NULL));
    }
    /* one statement per chunk: its loads do not wait on the state's
       (a tree of NaN-aware maxima would repeat its operands) */
    Op comb = st->dep ? OP_ADD : op_monoid(r->op)->combine;
    for (int64_t u = 0; u < U; u++) {
      Stmt *m = arena_alloc(L->a, sizeof *m);
      m->kind = ST_MAP;
      m->dst = t;
      m->value = OPX(L, comb, EK_REAL, tile_read(L, r), terms[u]);
      set_dom(L, ax);
      SExpr *mask = dom_mask(L, ax);
      if (mask) m->mask = mask, m->other = sx_real(L->a, op_monoid(r->op)->identity);
      vec_push(L->a, &loops[st->dep ? 1 : 0]->body, m);
    }
  }
  vec_push(L->a, &L->lists[L_PRE], loops[0]);
  if (loops[1]->body.len) vec_push(L->a, &L->lists[L_PRE], loops[1]);
  for (int i = 0; i < pk->outs.len; i++) {
    L->cur = list_after(0);
    store_output(L, pk->outs.data[i]);
  }
  if (L->failed) return false;
  for (int l = 0; l < NLISTS; l++)
    if (!is_body(l))
      for (int i = 0; i < L->lists[l].len; i++) vec_push(L->a, &k->body, L->lists[l].data[i]);
  vec_push(L->a, &L->tp->kernels, k);
  return true;
}

/* A state rescaled against D whose operand is exp(c (y - D)) itself (no
   select or factor around it): a NaN in y, which a max that drops NaNs
   misses, makes this state NaN on its row all the same. */
static bool clean_law_state(const PState *st, const Node *D) {
  if (st->dep != D || st->shift || st->ndrop) return false;
  const Node *x = st->node->in[0];
  return x->op == OP_EXP;
}

/* May max/min state D drop NaNs (Stmt.nan_ok)?  When every other state that
   reads it is a clean law state against it, D is not stored, and every
   output that reads D reads such a state too (or is one): then where
   PyTorch's max would be NaN, every output that could see it is NaN anyway
   (attention, softmax, log-softmax, cross-entropy).  The NaN-propagating
   max costs a second reduction per tile. */
static bool max_may_drop_nans(LP *L, int di) {
  PKernel *pk = L->pk;
  const Node *D = pk->states[di].node;
  if (D->op != OP_AMAX && D->op != OP_AMIN) return false;
  bool any = false;
  for (int i = 0; i < pk->nstates; i++) {
    if (i == di) continue;
    const PState *st = &pk->states[i];
    if (reads_state(L, st->node, D) && !clean_law_state(st, D)) return false;
    any |= clean_law_state(st, D);
  }
  if (!any) return false;
  for (int o = 0; o < pk->outs.len; o++) {
    const Node *out = pk->outs.data[o];
    if (out == D) return false;
    if (!reads_state(L, out, D)) continue;
    bool covered = false;
    for (int i = 0; i < pk->nstates && !covered; i++)
      covered = clean_law_state(&pk->states[i], D) && (out == pk->states[i].node || reads_state(L, out, pk->states[i].node));
    if (!covered) return false;
  }
  return true;
}

static bool lower_fused(LP *L) {
  PKernel *pk = L->pk;
  for (int i = 0; i < pk->nstates; i++) L->nan_ok[i] = max_may_drop_nans(L, i);
  Kernel *k = arena_alloc(L->a, sizeof *k);
  L->k = k;
  k->kind = KERNEL_FUSED;
  k->name = arena_printf(L->a, "k%d_fused_%s", L->tp->kernels.len, op_info[pk->root->op].name);
  k->threads = pk->threads ? pk->threads : 128;
  k->copy = pk->copy;
  k->store = pk->store;
  k->node = pk->root;
  for (int i = 0; i < pk->members.len; i++) {
    int8_t ax[2];
    if (tile_axes(L, pk->members.data[i], ax) > 2) {
      lp_fail(L, "a member spans more than two tile axes");
      return false;
    }
  }
  /* blocks: a split stream's chunks innermost, then the GRID axes, the
     root's last dimension first */
  GridAx gx[PLAN_MAX_AXES + 1];
  int ng = 0;
  bool placed[PLAN_MAX_AXES] = {0};
  const Node *root = pk->root;
  int64_t splits = pk->stream >= 0 ? pk->ax[pk->stream].splits : 1;
  for (int i = 0; i < pk->nstates; i++)
    if (pk->states[i].shift && pk->nmasks > 0) {
      /* the running count is the loop's trip count: no skipped tiles */
      lp_fail(L, "a mean-shifted sum of squares over a masked stream");
      return false;
    }
  if (splits > 1) {
    if (pk->npasses != 1) {
      lp_fail(L, "a split stream needs one pass");
      return false;
    }
    for (int i = 0; i < pk->outs.len; i++)
      if (pk_varies(pk, pk->outs.data[i])) {
        lp_fail(L, "a split stream cannot store per-tile outputs");
        return false;
      }
    gx[ng++] = (GridAx){-1, splits};
  }
  for (int d = root->shape.rank - 1; d >= 0; d--) {
    int a = pk->dimax[root->id][d];
    if (a >= 0 && pk->ax[a].role == AX_GRID && !placed[a]) placed[a] = true, gx[ng++] = (GridAx){a, cdiv(pk->ax[a].size, pk->ax[a].tile)};
  }
  for (int a = 0; a < pk->naxes; a++)
    if (pk->ax[a].role == AX_GRID && !placed[a]) gx[ng++] = (GridAx){a, cdiv(pk->ax[a].size, pk->ax[a].tile)};
  SExpr *bidx[PLAN_MAX_AXES + 1];
  if (!grid_place(L, gx, ng, bidx)) {
    lp_fail(L, "more blocks than CUDA's grid holds");
    return false;
  }
  for (int a = 0; a < pk->naxes; a++) L->base[a] = I(L, 0);
  SExpr *chunk_of = NULL;
  for (int i = 0; i < ng; i++)
    if (gx[i].axis < 0) chunk_of = bidx[i];
    else L->base[gx[i].axis] = IX(L, IX_MUL, bidx[i], I(L, pk->ax[gx[i].axis].tile));
  int s = pk->stream;
  if (s >= 0) L->base[s] = IX(L, IX_MUL, sx_var(L->a, TV_K), I(L, pk->ax[s].tile));
  /* even chunks and no mask: the loop runs [0, per) and the chunk's offset
     goes into the stream's index, so the trip count stays constant */
  bool even = false;
  int64_t per = 0;
  if (chunk_of) {
    int64_t ntiles = cdiv(pk->ax[s].size, pk->ax[s].tile);
    per = cdiv(ntiles, splits);
    even = ntiles % splits == 0;
    for (int i = 0; i < pk->members.len && even; i++) {
      const Node *m = pk->members.data[i];
      even = !(m->op == OP_SELECT && pk->member[m->in[0]->id] && op_info[m->in[0]->op].cls == OPC_COMPARE);
    }
    if (even)
      L->base[s] = IX(L, IX_MUL, IX(L, IX_ADD, IX(L, IX_MUL, chunk_of, I(L, per)), sx_var(L->a, TV_K)), I(L, pk->ax[s].tile));
    L->chunk0 = IX(L, IX_MUL, chunk_of, I(L, per));
    L->chunk_rel = even;
    L->per = per;
  }
  lane_pairs(L);
  /* state tiles start at their identities */
  L->cur = L_PRE;
  for (int i = 0; i < pk->nstates; i++) {
    const Node *r = pk->states[i].node;
    int8_t ax[2];
    node_axes(L, r, ax);
    TBuf *t = new_tile(L, "S", SCOPE_FRAGMENT, DT_F32, ax, is_prod(r));
    L->tile[r->id] = t;
    memcpy(L->tax[r->id], ax, 2);
    Stmt *f = emit(L, ST_FILL);
    f->dst = t;
    f->value = sx_real(L->a, op_monoid(r->op)->identity);
    for (int j = 0; j < pk->nstates; j++)
      if (pk->states[j].dep == r && !L->lane[j] && !L->prev[i]) L->prev[i] = new_tile(L, "prev", SCOPE_FRAGMENT, DT_F32, ax, false);
  }
  SExpr *lo[PLAN_MAX_PASSES], *hi[PLAN_MAX_PASSES];
  for (int p = 0; s >= 0 && p < pk->npasses; p++) {
    L->pass = p;
    find_masks(L, p, &lo[p], &hi[p]);
    L->cur = list_body(p);
    L->noptiles = 0;
    for (int i = 0; i < pk->nstates; i++)
      if (pk->states[i].pass == p) update_state(L, i);
    merge_lanes(L, p);
    for (int i = 0; i < pk->outs.len; i++) {
      const Node *o = pk->outs.data[i];
      if (!pk_varies(pk, o)) continue;
      int last = last_pass_read(L, o);
      if (last + 1 == p || (last < 0 && p == 0)) store_output(L, o);
    }
    /* per-tile values of this pass are recomputed in the next */
    for (int i = 0; i < pk->axnodes.len; i++) {
      const Node *n = pk->axnodes.data[i];
      if (L->tlist[n->id] == list_body(p)) L->tile[n->id] = NULL, L->tlist[n->id] = -1;
    }
    L->nmask = 0;
  }
  L->pass = -1;
  L->noptiles = 0;
  if (chunk_of) {
    /* each block streams its chunk: [c * per, (c + 1) * per) within the mask's bounds */
    if (even) {
      lo[0] = I(L, 0);
      hi[0] = I(L, per);
    } else {
      SExpr *c0 = IX(L, IX_MUL, chunk_of, I(L, per));
      lo[0] = IX(L, IX_MAX, lo[0], c0);
      hi[0] = IX(L, IX_MIN, hi[0], IX(L, IX_ADD, c0, I(L, per)));
    }
    L->cur = list_after(0);
    L->gap_lo[0] = L->gap_hi[0] = NULL; /* chunks visit their tiles in order */
    store_partials(L, chunk_of, splits);
    if (L->failed) return false;
    assemble(L, k, lo, hi);
    return lower_combine(L, splits);
  }
  for (int i = 0; i < pk->outs.len; i++) {
    const Node *o = pk->outs.data[i];
    if (pk_varies(pk, o)) continue;
    int last = last_pass_read(L, o);
    L->cur = last < 0 ? L_PRE : list_after(last);
    store_output(L, o);
  }
  if (L->failed) return false;
  assemble(L, k, lo, hi);
  return true;
}

/* ---- the program ---- */

/* The stored nodes a kernel may read or writes: its outputs and, below
   them through nodes it recomputes, the first stored ones (pricing needs
   no other globals; naming hundreds per candidate was the search's cost). */
static void touched(const Plan *p, const Node *n, bool top, bool *need, NodeList *stored_list, Arena *a) {
  if (need[n->id] || n->op == OP_INPUT) return;
  bool stored = p->kernel_of[n->id] >= 0;
  if (stored) {
    need[n->id] = true;
    vec_push(a, stored_list, n);
  }
  if (stored && !top) {
    bool mine = false;
    for (int k = 0; k < p->kernels.len; k++)
      for (int o = 0; o < p->kernels.data[k]->outs.len; o++) mine |= p->kernels.data[k]->outs.data[o] == n;
    if (!mine) return;
  }
  if (!stored) need[n->id] = true; /* visited */
  for (int i = 0; i < n->nin; i++) touched(p, n->in[i], false, need, stored_list, a);
}

TileProgram *tile_lower_plan(Plan *p) {
  Graph *g = p->g;
  TileProgram *tp = tile_program_new(g, p->dtype);
  /* the stored nodes that get a global: all, or (pricing) those touched */
  NodeList stored = {0};
  if (p->pricing) {
    bool *need = arena_alloc(g->ctx->arena, (size_t)g->nnodes);
    for (int k = 0; k < p->kernels.len; k++)
      for (int o = 0; o < p->kernels.data[k]->outs.len; o++) {
        const PKernel *pk = p->kernels.data[k];
        touched(p, pk->outs.data[o], true, need, &stored, g->ctx->arena);
        const Node *v = o < pk->views.len ? pk->views.data[o] : NULL;
        if (v && !need[v->id] && p->kernel_of[v->id] >= 0) vec_push(g->ctx->arena, &stored, v);
        if (v) need[v->id] = true;
      }
    plan_sort_nodes(&stored);
  } else {
    for (int i = 0; i < g->nnodes; i++)
      if (p->kernel_of[i] >= 0) vec_push(g->ctx->arena, &stored, g->nodes[i]);
  }
  for (int i = 0; i < stored.len; i++) {
    const Node *n = stored.data[i];
    if (n->op == OP_INPUT || n == g->output) continue;
    tp->of_node[n->id] = tile_global_buf(tp, n, arena_printf(g->ctx->arena, "t%d_%s", n->id, op_info[n->op].name), GB_TEMP);
  }
  tile_program_output(tp);
  LP tables = {0};
  for (int ki = 0; ki < p->kernels.len; ki++) {
    PKernel *pk = p->kernels.data[ki];
    if (pk->naive) {
      /* the node stored: the reshape a fused kernel would have stored its
         root through (a naive kernel computes the reshape itself) */
      tile_lower_node(tp, plan_naive_node(pk));
      continue;
    }
    LP L = {.a = g->ctx->arena, .g = g, .p = p, .tp = tp, .pk = pk, .nn = g->nnodes, .pass = -1, .want_row = -1};
    /* the per-node tables, cleared for each kernel (one set for the
       program: a deep model's backward has thousands of kernels over
       thousands of nodes) */
    size_t nn = (size_t)L.nn;
    if (!tables.tile) {
      tables.tile = arena_alloc(L.a, sizeof(TBuf *) * nn);
      tables.tax = arena_alloc(L.a, sizeof *L.tax * nn);
      tables.tlist = arena_alloc(L.a, sizeof(int) * nn);
      tables.tdep = arena_alloc(L.a, sizeof(Node *) * nn);
      tables.tother = arena_alloc(L.a, sizeof(double) * nn);
      tables.mark = arena_alloc(L.a, sizeof(int) * nn);
      tables.stack = arena_alloc(L.a, sizeof(Node *) * nn);
      tables.sub = arena_alloc(L.a, sizeof(SubKind) * nn);
      tables.sub_keep = arena_alloc(L.a, sizeof(int8_t) * nn);
    }
    memset(tables.tile, 0, sizeof(TBuf *) * nn);
    memset(tables.tax, 0, sizeof *L.tax * nn);
    memset(tables.tdep, 0, sizeof(Node *) * nn);
    memset(tables.tother, 0, sizeof(double) * nn);
    memset(tables.mark, 0, sizeof(int) * nn);
    memset(tables.sub, 0, sizeof(SubKind) * nn);
    memset(tables.sub_keep, 0, sizeof(int8_t) * nn);
    L.tile = tables.tile, L.tax = tables.tax, L.tlist = tables.tlist, L.tdep = tables.tdep;
    L.tother = tables.tother, L.mark = tables.mark, L.stack = tables.stack, L.sub = tables.sub;
    L.sub_keep = tables.sub_keep;
    for (int i = 0; i < L.nn; i++) L.tlist[i] = -1;
    if (!lower_fused(&L)) {
      snprintf(pk->why, sizeof pk->why, "%s", L.why);
      return NULL;
    }
  }
  for (int ki = 0; ki < tp->kernels.len; ki++) {
    Kernel *k = tp->kernels.data[ki];
    if (k->kind == KERNEL_FUSED || k->kind == KERNEL_COMBINE) { /* (naive kernels: lower.c did) */
      tile_simplify_indices(k, g->ctx->arena);
      tile_fit_stages(k);
      tile_defer_reductions(k, g->ctx->arena);
    }
  }
  return tp;
}
