/* test_simplify.c: index simplification by variable ranges (simplify.c).
 *
 * The reshape read it exists for becomes a plain row (W[0, i, bx*128 + j]),
 * a division whose remainder may leave [0, c) is kept, and random
 * expressions of +, -, *, //, % over the index variables (with divisors
 * that the remainders sometimes fit and sometimes not) evaluate to the
 * same integer before and after simplification at random points of the
 * variables' ranges.  A planted wrong law (x // c = Q whatever the
 * remainder) is what the random check exists to catch: it would break the
 * kept case above. */
#include <math.h>
#include <stdlib.h>

#include "../../src/tile/tile.h"
#include "unit.h"

static SExpr *V(Arena *a, TVar v) { return sx_var(a, v); }
static SExpr *N(Arena *a, int64_t v) { return sx_int(a, v); }
static SExpr *X(Arena *a, IdxOp op, SExpr *x, SExpr *y) { return sx_idx(a, op, x, y); }

static int64_t lo_of[TV_COUNT], hi_of[TV_COUNT];

static void set_ranges(void) {
  /* bx in [0, 1], by [0, 15], bz [0, 7], i [0, 63], j [0, 127], k [0, 31]; k1, k2 unknown */
  const int64_t hi[TV_COUNT] = {1, 15, 7, 63, 127, 31, -1, -1};
  for (int v = 0; v < TV_COUNT; v++) lo_of[v] = 0, hi_of[v] = hi[v];
}

static bool eval(const SExpr *e, const int64_t *vars, int64_t *out) { return sexpr_eval_index(e, vars, out); }

TEST(simplify_reshape_row) {
  Arena *a = arena_new();
  set_ranges();
  /* (bx*128 + j + i*256) // 256 % 256 and (...) % 256 with bx < 2, j < 128 */
  SExpr *flat = X(a, IX_ADD, X(a, IX_ADD, X(a, IX_MUL, V(a, TV_BX), N(a, 128)), V(a, TV_J)), X(a, IX_MUL, V(a, TV_I), N(a, 256)));
  SExpr *row = tile_simplify_index(a, X(a, IX_MOD, X(a, IX_DIV, flat, N(a, 256)), N(a, 256)), lo_of, hi_of);
  SExpr *col = tile_simplify_index(a, X(a, IX_MOD, flat, N(a, 256)), lo_of, hi_of);
  CHECK(row->kind == SX_VAR && row->var == TV_I);
  CHECK(col->kind == SX_IDX && col->iop == IX_ADD); /* bx*128 + j: no division left */
  int divs = 0;
  for (const SExpr *s = col; s->kind == SX_IDX; s = s->a[0]) divs += s->iop == IX_DIV || s->iop == IX_MOD;
  CHECK(divs == 0);
  /* j + i*200 over 256: j < 128 but i*200 is not a multiple of 256: kept */
  SExpr *skew = X(a, IX_DIV, X(a, IX_ADD, V(a, TV_J), X(a, IX_MUL, V(a, TV_I), N(a, 200))), N(a, 256));
  CHECK(tile_simplify_index(a, skew, lo_of, hi_of)->kind == SX_IDX);
  /* (bx*128 + j + 128) // 256: the remainder reaches 383, kept */
  SExpr *over = X(a, IX_DIV, X(a, IX_ADD, X(a, IX_ADD, X(a, IX_MUL, V(a, TV_BX), N(a, 128)), V(a, TV_J)), N(a, 128)), N(a, 256));
  SExpr *so = tile_simplify_index(a, over, lo_of, hi_of);
  int64_t vars[TV_COUNT] = {1, 0, 0, 0, 127, 0, 0, 0}, x0, x1;
  CHECK(eval(over, vars, &x0) && eval(so, vars, &x1) && x0 == x1 && x0 == 1);
  vars[0] = 0, vars[4] = 127;
  CHECK(eval(over, vars, &x0) && eval(so, vars, &x1) && x0 == x1 && x0 == 0);
  arena_free(a);
}

static uint64_t rs = 88172645463325252ull;
static int64_t rnd(int64_t n) {
  rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
  return (int64_t)(rs % (uint64_t)n);
}

/* a random index expression over bx, by, bz, i, j, k */
static SExpr *random_expr(Arena *a, int depth) {
  if (depth == 0 || rnd(4) == 0) {
    if (rnd(3) == 0) return N(a, rnd(600) - 100);
    return V(a, (TVar)rnd(6));
  }
  static const int64_t divisors[] = {2, 4, 16, 64, 128, 256, 7, 100};
  switch (rnd(5)) {
  case 0: return X(a, IX_ADD, random_expr(a, depth - 1), random_expr(a, depth - 1));
  case 1: return X(a, IX_SUB, random_expr(a, depth - 1), random_expr(a, depth - 1));
  case 2: return X(a, IX_MUL, random_expr(a, depth - 1), N(a, (int64_t[]){1, 2, 64, 128, 256, 3}[rnd(6)]));
  case 3: return X(a, IX_DIV, random_expr(a, depth - 1), N(a, divisors[rnd(8)]));
  default: return X(a, IX_MOD, random_expr(a, depth - 1), N(a, divisors[rnd(8)]));
  }
}

TEST(simplify_random_expressions_evaluate_alike) {
  Arena *a = arena_new();
  set_ranges();
  int changed = 0, points = 0;
  for (int t = 0; t < 3000; t++) {
    SExpr *e = random_expr(a, 4);
    SExpr *s = tile_simplify_index(a, e, lo_of, hi_of);
    changed += s != e;
    for (int p = 0; p < 20; p++) {
      int64_t vars[TV_COUNT] = {0};
      for (int v = 0; v < 6; v++) vars[v] = lo_of[v] + rnd(hi_of[v] - lo_of[v] + 1);
      if (p == 0)
        for (int v = 0; v < 6; v++) vars[v] = hi_of[v]; /* the corner */
      int64_t x, y;
      bool ok = eval(e, vars, &x);
      if (!ok) continue;
      points++;
      CHECK(eval(s, vars, &y) && x == y);
    }
  }
  CHECK(changed > 300); /* the law applied often enough to be tested */
  CHECK(points > 30000);
  arena_free(a);
}

/* select(c, k, k) folds to k only when both constants are the same bits:
   select(c, 0.0, -0.0) is -0.0 where c fails, and stays a select. */
TEST(select_of_one_constant_folds) {
  Arena *a = arena_new();
  SExpr *c = sx_op(a, OP_EQ, EK_BOOL, (SExpr *[]){sx_var(a, TV_I), sx_var(a, TV_J)}, 2);
  SExpr *same = sx_op(a, OP_SELECT, EK_REAL, (SExpr *[]){c, sx_real(a, 0.0), sx_real(a, 0.0)}, 3);
  CHECK(same->kind == SX_REAL && same->f == 0.0 && !signbit(same->f));
  SExpr *zeros = sx_op(a, OP_SELECT, EK_REAL, (SExpr *[]){c, sx_real(a, 0.0), sx_real(a, -0.0)}, 3);
  CHECK(zeros->kind == SX_OP && zeros->op == OP_SELECT);
  SExpr *diff = sx_op(a, OP_SELECT, EK_REAL, (SExpr *[]){c, sx_real(a, 1.0), sx_real(a, 2.0)}, 3);
  CHECK(diff->kind == SX_OP);
  arena_free(a);
}

/* Real constants combine where float32 arithmetic on them is exact, and only
   there: 1.0 + 0.0 is 1.0, -0.0 + -0.0 stays -0.0 (IEEE), 0.1 + 0.2 (not
   float32 numbers) and 1e30 * 1e30 (inf in float32, not in double's exact
   sense of the kernel) are left to the kernel, x + 0.0 of a variable too. */
TEST(real_constants_fold_only_when_exact) {
  Arena *a = arena_new();
  SExpr *one = sx_op(a, OP_ADD, EK_REAL, (SExpr *[]){sx_real(a, 1.0), sx_real(a, 0.0)}, 2);
  CHECK(one->kind == SX_REAL && one->f == 1.0);
  SExpr *nz = sx_op(a, OP_ADD, EK_REAL, (SExpr *[]){sx_real(a, -0.0), sx_real(a, -0.0)}, 2);
  CHECK(nz->kind == SX_REAL && nz->f == 0.0 && signbit(nz->f));
  SExpr *inexact = sx_op(a, OP_ADD, EK_REAL, (SExpr *[]){sx_real(a, 0.1), sx_real(a, 0.2)}, 2);
  CHECK(inexact->kind == SX_OP);
  SExpr *big = sx_op(a, OP_MUL, EK_REAL, (SExpr *[]){sx_real(a, 1e30), sx_real(a, 1e30)}, 2);
  CHECK(big->kind == SX_OP);
  SExpr *var = sx_op(a, OP_ADD, EK_REAL, (SExpr *[]){sx_var(a, TV_I), sx_real(a, 0.0)}, 2);
  CHECK(var->kind == SX_OP);
  arena_free(a);
}
