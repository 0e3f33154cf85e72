/*
 * simplify.c: index expressions simplified by the ranges of their variables.
 *
 * A read through a reshape, a slice or a stacked parameter reaches memory
 * by the flat offset of the element, split again by floor division and
 * remainder: W[0, ((bx*128 + j + i*256) // 256) % 256, (bx*128 + j + i*256)
 * % 256].  Every variable has a known range in its statement (block ids
 * from the grid, i and j from the tile, a loop variable from its bounds),
 * so such an index is often just W[0, i, bx*128 + j]: a contiguous row a
 * target can load as a vector or a bulk copy (TileLang's T.copy, TMA),
 * where the divisions made it a scalar gather.
 *
 * The one law: if x = c*Q + R for an integer expression Q and a remainder
 * R whose range lies in [0, c), then x // c = Q and x % c = R (floor
 * division, any sign of Q).  x is decomposed into an affine form over
 * atoms (variables and non-affine subexpressions, whose ranges come from
 * interval arithmetic); the terms whose coefficients c divides form Q, the
 * rest and the constant's remainder form R.  Nothing else is rewritten, so
 * the simplified program computes the same indices as the lowered one at
 * every point of the variables' ranges (tests/unit checks it on random
 * expressions by evaluation).
 */
#include <string.h>

#include "tile.h"

typedef struct IRange { int64_t lo, hi; bool known; } IRange;
typedef struct SimpCtx { Arena *a; IRange var[TV_COUNT]; } SimpCtx;

enum { AFF_MAX = 16 };
static const int64_t RANGE_LIMIT = (int64_t)1 << 50; /* beyond: unknown (no overflow in products) */

static IRange unknown(void) { return (IRange){0, 0, false}; }
static IRange exact(int64_t lo, int64_t hi) {
  if (lo < -RANGE_LIMIT || hi > RANGE_LIMIT || lo > hi) return unknown();
  return (IRange){lo, hi, true};
}

static int64_t fdiv(int64_t a, int64_t b) { return ix_floordiv(a, b); }

/* the range of an integer index expression */
static IRange range_of(const SimpCtx *c, const SExpr *e) {
  switch (e->kind) {
  case SX_INT: return exact(e->i, e->i);
  case SX_VAR: return c->var[e->var];
  case SX_IDX: {
    IRange x = range_of(c, e->a[0]), y = range_of(c, e->a[1]);
    if (e->iop == IX_LT || e->iop == IX_AND) return exact(0, 1);
    if (!x.known || !y.known) return unknown();
    switch (e->iop) {
    case IX_ADD: return exact(x.lo + y.lo, x.hi + y.hi);
    case IX_SUB: return exact(x.lo - y.hi, x.hi - y.lo);
    case IX_MUL: {
      int64_t p[4], lo, hi;
      const int64_t xs[2] = {x.lo, x.hi}, ys[2] = {y.lo, y.hi};
      for (int k = 0; k < 4; k++)
        if (__builtin_mul_overflow(xs[k / 2], ys[k % 2], &p[k])) return unknown();
      lo = hi = p[0];
      for (int k = 1; k < 4; k++) lo = p[k] < lo ? p[k] : lo, hi = p[k] > hi ? p[k] : hi;
      return exact(lo, hi);
    }
    case IX_DIV:
      if (y.lo != y.hi || y.lo <= 0) return unknown();
      return exact(fdiv(x.lo, y.lo), fdiv(x.hi, y.lo));
    case IX_MOD:
      if (y.lo != y.hi || y.lo <= 0) return unknown();
      return x.lo >= 0 && x.hi < y.lo ? x : exact(0, y.lo - 1);
    case IX_MIN: return exact(x.lo < y.lo ? x.lo : y.lo, x.hi < y.hi ? x.hi : y.hi);
    case IX_MAX: return exact(x.lo > y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi);
    case IX_LT:
    case IX_AND: break;
    }
    return unknown();
  }
  case SX_REAL:
  case SX_LOAD:
  case SX_TILE:
  case SX_OP: return unknown();
  }
  return unknown();
}

/* x as sum(coef[k] * atom[k]) + konst */
typedef struct Aff { int n; int64_t coef[AFF_MAX]; const SExpr *atom[AFF_MAX]; int64_t konst; bool ok; } Aff;

static void aff_add(Aff *f, const SExpr *e, int64_t mul) {
  if (!f->ok) return;
  if (mul > RANGE_LIMIT || mul < -RANGE_LIMIT) {
    f->ok = false;
    return;
  }
  if (e->kind == SX_INT) {
    int64_t t;
    if (__builtin_mul_overflow(mul, e->i, &t) || __builtin_add_overflow(f->konst, t, &f->konst)) f->ok = false;
    return;
  }
  if (e->kind == SX_IDX && (e->iop == IX_ADD || e->iop == IX_SUB)) {
    aff_add(f, e->a[0], mul);
    aff_add(f, e->a[1], e->iop == IX_ADD ? mul : -mul);
    return;
  }
  if (e->kind == SX_IDX && e->iop == IX_MUL && (e->a[0]->kind == SX_INT || e->a[1]->kind == SX_INT)) {
    int k = e->a[0]->kind == SX_INT ? 0 : 1;
    int64_t m;
    if (__builtin_mul_overflow(mul, e->a[k]->i, &m)) f->ok = false;
    else aff_add(f, e->a[1 - k], m);
    return;
  }
  if (f->n == AFF_MAX) {
    f->ok = false;
    return;
  }
  f->coef[f->n] = mul;
  f->atom[f->n++] = e;
}

/* sum over the terms picked (coefficients divided by div) plus konst */
static SExpr *aff_build(const SimpCtx *c, const Aff *f, const bool *pick, int64_t div, int64_t konst) {
  SExpr *s = NULL;
  for (int k = 0; k < f->n; k++) {
    if (!pick[k]) continue;
    SExpr *t = sx_idx(c->a, IX_MUL, (SExpr *)f->atom[k], sx_int(c->a, f->coef[k] / div));
    s = s ? sx_idx(c->a, IX_ADD, s, t) : t;
  }
  if (!s) return sx_int(c->a, konst);
  return sx_idx(c->a, IX_ADD, s, sx_int(c->a, konst));
}

/* x // d or x % d by the law above, or NULL */
static SExpr *divmod(const SimpCtx *c, IdxOp op, const SExpr *x, int64_t d) {
  Aff f = {.ok = true};
  aff_add(&f, x, 1);
  if (!f.ok) return NULL;
  bool q[AFF_MAX] = {0}, r[AFF_MAX] = {0};
  int64_t q0 = fdiv(f.konst, d), r0 = f.konst - q0 * d;
  IRange rest = exact(r0, r0);
  for (int k = 0; k < f.n; k++) {
    if (f.coef[k] % d == 0) {
      q[k] = true;
      continue;
    }
    r[k] = true;
    IRange a = range_of(c, f.atom[k]);
    if (!a.known || !rest.known) return NULL;
    int64_t lo, hi;
    if (__builtin_mul_overflow(f.coef[k], a.lo, &lo) || __builtin_mul_overflow(f.coef[k], a.hi, &hi)) return NULL;
    if (lo > hi) {
      int64_t t = lo;
      lo = hi, hi = t;
    }
    rest = exact(rest.lo + lo, rest.hi + hi);
  }
  if (!rest.known || rest.lo < 0 || rest.hi >= d) return NULL;
  return op == IX_DIV ? aff_build(c, &f, q, d, q0) : aff_build(c, &f, r, 1, r0);
}

static SExpr *simp(const SimpCtx *c, SExpr *e) {
  if (!e) return e;
  switch (e->kind) {
  case SX_INT:
  case SX_REAL:
  case SX_VAR: return e;
  case SX_IDX: {
    SExpr *x = simp(c, e->a[0]), *y = simp(c, e->a[1]);
    if ((e->iop == IX_DIV || e->iop == IX_MOD) && y->kind == SX_INT && y->i > 0) {
      SExpr *s = divmod(c, e->iop, x, y->i);
      if (s) return s;
    }
    if (x == e->a[0] && y == e->a[1]) return e;
    return sx_idx(c->a, e->iop, x, y);
  }
  case SX_LOAD:
  case SX_TILE:
  case SX_OP: {
    SExpr *n = arena_alloc(c->a, sizeof *n);
    *n = *e;
    if (e->nidx) {
      n->idx = arena_alloc(c->a, sizeof(SExpr *) * (size_t)e->nidx);
      for (int k = 0; k < e->nidx; k++) n->idx[k] = simp(c, e->idx[k]);
    }
    for (int k = 0; k < 3; k++) n->a[k] = e->a[k] ? simp(c, e->a[k]) : NULL;
    return n;
  }
  }
  return e;
}

static void tile_ij(SimpCtx *c, int64_t ni, int64_t nj) {
  c->var[TV_I] = exact(0, ni - 1);
  c->var[TV_J] = exact(0, nj - 1);
}

static void simp_list(SimpCtx *c, StmtList *l, int depth);

static void simp_stmt(SimpCtx *c, Stmt *s, int depth) {
  SimpCtx in = *c;
  switch (s->kind) {
  case ST_FILL:
  case ST_GEMM:
  case ST_REDUCE: return;
  case ST_MAP:
    tile_ij(&in, s->dst->shape.d[0].n, s->dst->shape.rank == 2 ? s->dst->shape.d[1].n : 1);
    s->value = simp(&in, s->value);
    s->mask = simp(&in, s->mask);
    s->other = simp(&in, s->other);
    return;
  case ST_STORE:
  case ST_ATOMIC_ADD:
    tile_ij(&in, s->ext[0], s->ext[1]);
    s->value = simp(&in, s->value);
    s->mask = simp(&in, s->mask);
    for (int k = 0; k < s->ngidx; k++) s->gidx[k] = simp(&in, s->gidx[k]);
    return;
  case ST_LOOP: {
    s->lo = simp(c, s->lo);
    s->hi = simp(c, s->hi);
    IRange lo = range_of(c, s->lo), hi = range_of(c, s->hi);
    if (depth < TILE_MAX_LOOP_DEPTH)
      in.var[tv_loop(depth)] = lo.known && hi.known ? exact(lo.lo, hi.hi - 1) : unknown();
    simp_list(&in, &s->body, depth + 1);
    return;
  }
  case ST_IF:
    s->cond = simp(c, s->cond);
    simp_list(c, &s->body, depth);
    simp_list(c, &s->orelse, depth);
    return;
  }
}

static void simp_list(SimpCtx *c, StmtList *l, int depth) {
  for (int i = 0; i < l->len; i++) simp_stmt(c, l->data[i], depth);
}

void tile_simplify_indices(Kernel *k, Arena *a) {
  SimpCtx c = {.a = a};
  for (int v = 0; v < TV_COUNT; v++) c.var[v] = unknown();
  for (int d = 0; d < 3; d++) c.var[TV_BX + d] = exact(0, k->grid[d] - 1);
  simp_list(&c, &k->body, 0);
}

SExpr *tile_simplify_index(Arena *a, SExpr *e, const int64_t *lo, const int64_t *hi) {
  SimpCtx c = {.a = a};
  for (int v = 0; v < TV_COUNT; v++) c.var[v] = lo[v] <= hi[v] ? exact(lo[v], hi[v]) : unknown();
  return simp(&c, e);
}
