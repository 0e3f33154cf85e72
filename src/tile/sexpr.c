/*
 * sexpr.c: building scalar expressions of tile programs, and the storage
 * types.  Index arithmetic folds constants as it is built (x*1, x+0, 0*x,
 * constant operands), so the printed and emitted index expressions stay as
 * short as the lowering can make them.  A real division by a constant
 * becomes a product with its reciprocal (sx_op); real constants combine
 * where float32 arithmetic on them is exact.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "tile.h"

int dtype_bytes(DType t) {
  switch (t) {
  case DT_F32:
  case DT_I32: return 4;
  case DT_F16:
  case DT_BF16: return 2;
  case DT_I64: return 8;
  case DT_BOOL: return 1;
  }
  return 4;
}

const char *dtype_name(DType t) {
  switch (t) {
  case DT_F32: return "float32";
  case DT_F16: return "float16";
  case DT_BF16: return "bfloat16";
  case DT_I32: return "int32";
  case DT_I64: return "int64";
  case DT_BOOL: return "bool";
  }
  return "?";
}

bool dtype_parse(const char *s, DType *t) {
  static const struct { const char *a, *b; DType t; } names[] = {
      {"bf16", "bfloat16", DT_BF16}, {"f16", "float16", DT_F16}, {"f32", "float32", DT_F32}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(s, names[i].a) || !strcmp(s, names[i].b)) {
      *t = names[i].t;
      return true;
    }
  return false;
}

/* Round to a float format with `mant` stored mantissa bits and exponent
   range [emin, emax] (normal numbers), round-to-nearest-even, with
   subnormals and overflow to infinity. */
static double round_float(double v, int mant, int emin, int emax) {
  if (!isfinite(v) || v == 0) return v;
  int e;
  frexp(v, &e); /* v = m * 2^e, 0.5 <= |m| < 1 */
  int exp = e - 1;            /* v = 1.f * 2^exp */
  if (exp < emin) exp = emin; /* subnormal: fixed quantum */
  double quantum = ldexp(1.0, exp - mant);
  double r = nearbyint(v / quantum) * quantum;
  if (fabs(r) >= ldexp(2.0 - ldexp(1.0, -mant), emax) + ldexp(1.0, emax - mant - 1))
    return v > 0 ? INFINITY : -INFINITY;
  return r;
}

double dtype_round(DType t, double v) {
  switch (t) {
  case DT_F32: return (double)(float)v;
  case DT_F16: return round_float(v, 10, -14, 15);
  case DT_BF16: return round_float(v, 7, -126, 127);
  case DT_I32:
  case DT_I64: return trunc(v);
  case DT_BOOL: return v != 0;
  }
  return v;
}

static SExpr *new_sx(Arena *a, SExprKind k, ElemKind ek) {
  SExpr *e = arena_alloc(a, sizeof *e);
  e->kind = k;
  e->ek = ek;
  return e;
}

SExpr *sx_int(Arena *a, int64_t v) {
  SExpr *e = new_sx(a, SX_INT, EK_INT);
  e->i = v;
  return e;
}

SExpr *sx_real(Arena *a, double v) {
  SExpr *e = new_sx(a, SX_REAL, EK_REAL);
  e->f = v;
  return e;
}

SExpr *sx_var(Arena *a, TVar v) {
  SExpr *e = new_sx(a, SX_VAR, EK_INT);
  e->var = v;
  return e;
}

static bool is_int(const SExpr *e, int64_t v) { return e->kind == SX_INT && e->i == v; }

int64_t ix_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

bool sexpr_eval_index(const SExpr *e, const int64_t *vars, int64_t *out) {
  int64_t x, y;
  switch (e->kind) {
  case SX_INT: *out = e->i; return true;
  case SX_VAR:
    if ((unsigned)e->var >= TV_COUNT) return false;
    *out = vars[e->var];
    return true;
  case SX_IDX:
    if (!sexpr_eval_index(e->a[0], vars, &x) || !sexpr_eval_index(e->a[1], vars, &y)) return false;
    switch (e->iop) {
    case IX_ADD: *out = x + y; return true;
    case IX_SUB: *out = x - y; return true;
    case IX_MUL: *out = x * y; return true;
    case IX_DIV:
      if (!y) return false;
      *out = ix_floordiv(x, y);
      return true;
    case IX_MOD:
      if (!y) return false;
      *out = x - ix_floordiv(x, y) * y;
      return true;
    case IX_MIN: *out = x < y ? x : y; return true;
    case IX_MAX: *out = x > y ? x : y; return true;
    case IX_LT: *out = x < y; return true;
    case IX_AND: *out = x && y; return true;
    }
    return false;
  case SX_REAL:
  case SX_LOAD:
  case SX_TILE:
  case SX_OP: return false;
  }
  return false;
}

SExpr *sx_idx(Arena *a, IdxOp op, SExpr *x, SExpr *y) {
  if (x->kind == SX_INT && y->kind == SX_INT) {
    int64_t p = x->i, q = y->i;
    switch (op) {
    case IX_ADD: return sx_int(a, p + q);
    case IX_SUB: return sx_int(a, p - q);
    case IX_MUL: return sx_int(a, p * q);
    case IX_DIV: if (q) return sx_int(a, ix_floordiv(p, q)); break;
    case IX_MOD: if (q) return sx_int(a, p - ix_floordiv(p, q) * q); break;
    case IX_MIN: return sx_int(a, p < q ? p : q);
    case IX_MAX: return sx_int(a, p > q ? p : q);
    case IX_LT: return sx_int(a, p < q);
    case IX_AND: return sx_int(a, p && q);
    }
  }
  switch (op) {
  case IX_ADD:
    if (is_int(x, 0)) return y;
    if (is_int(y, 0)) return x;
    break;
  case IX_SUB:
    if (is_int(y, 0)) return x;
    break;
  case IX_MUL:
    if (is_int(x, 1)) return y;
    if (is_int(y, 1)) return x;
    if (is_int(x, 0) || is_int(y, 0)) return sx_int(a, 0);
    break;
  case IX_DIV:
    if (is_int(y, 1)) return x;
    break;
  case IX_MOD:
    if (is_int(y, 1)) return sx_int(a, 0);
    break;
  case IX_MIN:
  case IX_MAX:
  case IX_LT: break;
  case IX_AND:
    if (is_int(x, 1)) return y;
    if (is_int(y, 1)) return x;
    break;
  }
  SExpr *e = new_sx(a, SX_IDX, op == IX_LT || op == IX_AND ? EK_BOOL : EK_INT);
  e->iop = op;
  e->a[0] = x;
  e->a[1] = y;
  e->n = 2;
  return e;
}

SExpr *sx_op(Arena *a, Op op, ElemKind ek, SExpr **args, int n) {
  /* x / c for a real constant c: x * (1/c), a multiply where a division
     costs a dozen instructions (TileLang divides to IEEE precision).  The
     product differs from the quotient by at most one rounding of 1/c (an
     ulp of float32); 1/c must be a normal number (c not 0, inf or huge) */
  if (op == OP_DIV && n == 2 && ek == EK_REAL && args[1]->kind == SX_REAL) {
    double r = 1.0 / args[1]->f; /* inf for 0, 0 for inf, NaN for NaN: none in range */
    if (fabs(r) >= FLT_MIN && fabs(r) <= FLT_MAX) {
      SExpr *m[2] = {args[0], sx_real(a, r)};
      return sx_op(a, OP_MUL, ek, m, 2);
    }
  }
  /* k1 + k2, k1 - k2, k1 * k2 of two real constants, where the kernel's
     float32 arithmetic is exact: both are float32 numbers and so is the
     result (1.0 + 0.0, which gradients leave where select(x == x, 0, 0)
     folded; Triton's LLVM spent minutes on a kernel full of them).  No
     NaN, and signed zeros as IEEE arithmetic gives them */
  if ((op == OP_ADD || op == OP_SUB || op == OP_MUL) && n == 2 && ek == EK_REAL && args[0]->kind == SX_REAL &&
      args[1]->kind == SX_REAL) {
    double x = args[0]->f, y = args[1]->f, v = op == OP_ADD ? x + y : op == OP_SUB ? x - y : x * y;
    if (v == v && (double)(float)x == x && (double)(float)y == y && (double)(float)v == v) return sx_real(a, v);
  }
  /* select(c, k, k) for one real constant k (bit for bit: 0.0 and -0.0
     stay apart, as do NaNs of different payloads): k.  Gradients stretch
     a value to a shape by adding select(x == x, 0, 0) (src/grad), which
     kernels would otherwise evaluate element by element */
  if (op == OP_SELECT && n == 3 && args[1]->kind == SX_REAL && args[2]->kind == SX_REAL &&
      !memcmp(&args[1]->f, &args[2]->f, sizeof(double)))
    return args[1];
  SExpr *e = new_sx(a, SX_OP, ek);
  e->op = op;
  for (int i = 0; i < n && i < 3; i++) e->a[i] = args[i];
  e->n = n;
  return e;
}

SExpr *sx_load(Arena *a, TBuf *buf, SExpr **idx, int n) {
  SExpr *e = new_sx(a, SX_LOAD, buf->node ? buf->node->kind : EK_REAL);
  e->buf = buf;
  e->idx = arena_alloc(a, sizeof(SExpr *) * (size_t)(n ? n : 1));
  memcpy(e->idx, idx, sizeof(SExpr *) * (size_t)n);
  e->nidx = n;
  return e;
}

SExpr *sx_tile(Arena *a, TBuf *buf, SExpr *i, SExpr *j) {
  SExpr *e = new_sx(a, SX_TILE, EK_REAL);
  e->buf = buf;
  e->idx = arena_alloc(a, sizeof(SExpr *) * 2);
  e->idx[0] = i;
  e->idx[1] = j;
  e->nidx = j ? 2 : 1;
  return e;
}

SExpr *sx_subst_vars(Arena *a, const SExpr *e, SExpr *const repl[TV_COUNT]) {
  if (!e) return NULL;
  if (e->kind == SX_VAR && repl[e->var]) return repl[e->var];
  SExpr *c = new_sx(a, e->kind, e->ek);
  *c = *e;
  if (e->nidx) {
    c->idx = arena_alloc(a, sizeof(SExpr *) * (size_t)e->nidx);
    for (int i = 0; i < e->nidx; i++) c->idx[i] = sx_subst_vars(a, e->idx[i], repl);
  }
  for (int i = 0; i < 3; i++) c->a[i] = sx_subst_vars(a, e->a[i], repl);
  return c;
}

void tile_subst_list(Arena *a, StmtList *l, SExpr *const repl[TV_COUNT]) {
  for (int i = 0; i < l->len; i++) {
    Stmt *s = l->data[i];
    s->value = sx_subst_vars(a, s->value, repl);
    s->mask = sx_subst_vars(a, s->mask, repl);
    s->other = sx_subst_vars(a, s->other, repl);
    s->lo = sx_subst_vars(a, s->lo, repl);
    s->hi = sx_subst_vars(a, s->hi, repl);
    s->cond = sx_subst_vars(a, s->cond, repl);
    if (s->ngidx) {
      SExpr **g = arena_alloc(a, sizeof(SExpr *) * (size_t)s->ngidx);
      for (int k = 0; k < s->ngidx; k++) g[k] = sx_subst_vars(a, s->gidx[k], repl);
      s->gidx = g;
    }
    tile_subst_list(a, &s->body, repl);
    tile_subst_list(a, &s->orelse, repl);
  }
}

bool tile_fold_grid_at(Arena *a, Kernel *k, int64_t limit) {
  int64_t gx = k->grid[0], gy = k->grid[1], gz = k->grid[2];
  if (gy <= limit && gz <= limit) return true;
  if (gx > 2147483647 / gy || gx * gy > 2147483647 / gz) return false;
  SExpr *repl[TV_COUNT] = {0};
  SExpr *bx = sx_var(a, TV_BX);
  repl[TV_BX] = sx_idx(a, IX_MOD, bx, sx_int(a, gx));
  repl[TV_BY] = sx_idx(a, IX_MOD, sx_idx(a, IX_DIV, bx, sx_int(a, gx)), sx_int(a, gy));
  repl[TV_BZ] = sx_idx(a, IX_DIV, bx, sx_int(a, gx * gy));
  tile_subst_list(a, &k->body, repl);
  k->grid[0] = gx * gy * gz;
  k->grid[1] = k->grid[2] = 1;
  return true;
}

bool tile_fold_grid(Arena *a, Kernel *k) { return tile_fold_grid_at(a, k, 65535); }

static int64_t trips_at(const Stmt *loop, const int64_t *vars) {
  int64_t lo, hi;
  if (!sexpr_eval_index(loop->lo, vars, &lo) || !sexpr_eval_index(loop->hi, vars, &hi)) return 0;
  return hi > lo ? hi - lo : 0;
}

static void reads_a_var(const SExpr *e, void *ud) {
  if (e->kind == SX_VAR) *(bool *)ud = true;
}

/* The trip counts of a loop over the kernel's blocks, outer loop variables
   at 0: at every block when the grid has at most 128 of them, else at 128
   evenly spaced (and, with corners, at the grid's 8 corners too); their
   sum, largest and number in *sum, *max, *count.  Constant bounds: one
   evaluation. */
#define TRIP_SAMPLES 128
static void trips_over_blocks(const Kernel *k, const Stmt *loop, bool corners, double *sum, int64_t *max,
                              int64_t *count) {
  int64_t vars[TV_COUNT] = {0};
  *sum = 0, *max = 0, *count = 0;
  bool var = false;
  sexpr_walk(loop->lo, reads_a_var, &var);
  sexpr_walk(loop->hi, reads_a_var, &var);
  if (!var) {
    *max = trips_at(loop, vars);
    *sum = (double)*max, *count = 1;
    return;
  }
  double blocks = (double)k->grid[0] * (double)k->grid[1] * (double)k->grid[2];
  int64_t n = blocks > TRIP_SAMPLES ? TRIP_SAMPLES : (int64_t)blocks, step = (int64_t)(blocks / (double)n);
  if (step < 1) step = 1;
  for (int64_t s = 0; s < n + (corners && blocks > TRIP_SAMPLES ? 8 : 0); s++) {
    if (s < n) {
      int64_t b = s * step;
      vars[TV_BX] = b % k->grid[0];
      vars[TV_BY] = (b / k->grid[0]) % k->grid[1];
      vars[TV_BZ] = b / (k->grid[0] * k->grid[1]);
    } else {
      for (int d = 0; d < 3; d++) vars[TV_BX + d] = ((s - n) >> d) & 1 ? k->grid[d] - 1 : 0;
    }
    int64_t t = trips_at(loop, vars);
    *sum += (double)t;
    *max = t > *max ? t : *max;
    ++*count;
  }
}

int64_t tile_loop_trips_max(const Kernel *k, const Stmt *loop) {
  double sum;
  int64_t max, count;
  trips_over_blocks(k, loop, true, &sum, &max, &count);
  return max;
}

double tile_loop_trips_mean(const Kernel *k, const Stmt *loop) {
  double sum;
  int64_t max, count;
  trips_over_blocks(k, loop, false, &sum, &max, &count);
  return count ? sum / (double)count : 0;
}

/* A pipeline deeper than its loop's trips has nothing to overlap but
   still takes a buffer per stage (shared memory the cost model counts):
   the depth is cut to the most trips any block runs, and a loop of one
   trip runs serial. */
static void fit_stages(const Kernel *k, StmtList *l) {
  for (int i = 0; i < l->len; i++) {
    Stmt *s = l->data[i];
    if (s->kind == ST_LOOP) {
      int64_t trips = tile_loop_trips_max(k, s);
      if (s->stages > trips) s->stages = trips > 1 ? (int)trips : 0;
      fit_stages(k, &s->body);
    }
    if (s->kind == ST_IF) fit_stages(k, &s->body), fit_stages(k, &s->orelse);
  }
}

void tile_fit_stages(Kernel *k) { fit_stages(k, &k->body); }
