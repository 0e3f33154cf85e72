/*
 * bound.c: running error analysis in the float64 interpreter.
 *
 * Method.  interp_bound evaluates a node as interp_run_ex does and, beside
 * each value v, a bound e >= |computed - v| on the error of evaluating the
 * same graph in low precision: the caller says, per node, with which unit
 * roundoff its result is rounded (u: 2^-24 for float32, 2^-8 for bfloat16,
 * 0 for a node computed exactly or not at all) and with which its sums and
 * products accumulate (uacc).  Given values and inputs are exact.  The
 * bound is propagated forward, node by node, in the manner of Wilkinson's
 * running error analysis (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., sec. 3.3): an op's bound is what its operands'
 * bounds become through it plus its own rounding u*|v| + η (none where the
 * value is computed exactly and is a number of the type: a bfloat16 value
 * moved into a bfloat16 tile); η = u times the type's smallest normal,
 * half the subnormals' spacing, is what a rounding may add near zero
 * (Higham's model with underflow, sec. 2.1), so an underflowed value that
 * later ops scale back up carries its error.  Each element carries two bounds, kept
 * consistent: e, absolute, and r, relative (computed/v lies in [e^-r, e^r],
 * so the sign is certain), because products, quotients and exp compose
 * relative errors: exp(a) has r = e_a, P/l has r_P + r_l, a sum of terms
 * of one sign has the largest r of its terms, log(x) has e = r_x.  Where
 * only one is finite the other follows from it (e = |v| expm1(r)).
 *   elementwise  the operand bound times the largest |derivative| over the
 *                interval the operand may lie in, or the exact difference
 *                where it has a closed form: exp: v*expm1(e_a); log:
 *                -log1p(-e_a/a); a/b: (|b|e_a + |a|e_b) / (|b|(|b| - e_b))
 *                or e_a e^r_b / |b| + |a/b| expm1(r_b); a*b: |b|e_a + |a|e_b
 *                + e_a e_b or e_a |b| e^r_b + |ab| expm1(r_b) (the smaller;
 *                the second where a has only an absolute bound, a value
 *                that may have underflowed); add, sub: e_a + e_b;
 *                max, min, relu, abs, neg: 1-Lipschitz.  Near a singular
 *                point (log, rsqrt or sqrt of an operand whose interval
 *                reaches 0, a divisor whose interval contains 0, a negative
 *                power of an interval around 0) e is infinite unless r
 *                bounds it; tanh, erf and sigmoid are capped by their range.
 *   comparison   a boolean's bound is 1 when it could flip (|a - b| <=
 *                C (e_a + e_b), C = INTERP_BOUND_C for operations that
 *                are faithfully rounded, not correctly), else 0; a
 *                select on a condition that could flip is off by at most
 *                |x - y| + max(e_x, e_y), else it has its branch's bound.
 *                Integer and index values are exact (iota, index inputs).
 *   sum          sum e_k + n*uacc*sum|t_k| + n*η + u*|v| over the n terms:
 *                the worst case of recursive summation (Higham's gamma_n);
 *                terms of one sign keep a relative bound, those with only
 *                an absolute one counted as their share of the sum.
 *   amax, amin   the computed maximum lies in [max(t - e), max(t + e)]
 *                over the row (minimum alike): the bound is that interval's
 *                reach from the value, at most the row's largest bound.
 *   matmul       sum_k (|a_k| e_bk + e_ak |b_k| + e_ak e_bk) +
 *                K*uacc*sum_k |a_k b_k| + K*η + u*|v|: three products (BLAS
 *                dgemm through the interpreter's own matmul) of |A|, |B|
 *                and the operand bounds.
 *   layout       permute, reshape, slice, concat and gather move bounds
 *                with values (again the interpreter's own ops); a gather
 *                whose index could be wrong has an infinite bound.
 * Limits.  First order: an op's rounding is charged relative to the exact
 * value, u*|v|, not to the computed one (|v| + e), and products of two
 * roundings are dropped.  Worst case: n*u per sum where random rounding
 * errors grow like sqrt(n)*u.  No correlation: x - x is charged 2*e_x
 * though it is exactly 0, so where a kernel subtracts a value from a max
 * that equals it (softmax of logits of 1e8: S_ij - max_j S_ij) the bound
 * of exp is as large as the logits' error makes it, though the element
 * that attains the max is exact; such a bound can exceed |v|, and the
 * check it feeds is then vacuous there (verify counts those elements).
 *
 * Infinities and NaN.  At a NaN value the bound is infinite.  At an
 * infinite value the bound says whether the computed value is certainly
 * the same infinity (0: a mask constant -inf, a select of it on a certain
 * condition, -inf + x for any finite x) or may be anything (infinite).
 * Bounds of finite values computed from exact infinities follow from the
 * rules (exp(-inf) = 0 with bound 0); a rule that would multiply an
 * infinity by 0 yields an infinite bound.  An infinite bound at a finite
 * value means the evaluation could not be bounded (verify accepts any
 * value there, and counts it).
 */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "iter.h"

typedef struct Bnd {
  Graph *g;
  Tensor **given;
  const double *u, *uacc;
  bool *keep;          /* every node: interp_run_ex returns every value */
  Tensor **val;        /* values of the nodes the target depends on */
  Tensor **err;        /* their absolute bounds e */
  Tensor **rel;        /* their relative bounds r */
  Tensor **move;       /* scratch `given` for running one op on bounds */
  Tensor **args;       /* scratch operand list (concat's may be long) */
  Tensor *tmp[4];      /* matmul scratch */
  Tensor *out;         /* the target's value */
} Bnd;

/* One element's bounds. */
typedef struct Eb { double e, r; } Eb;

static void bnd_free(Bnd *b) {
  if (!b) return;
  for (int i = 0; i < b->g->nnodes; i++) {
    if (b->val) tensor_free(b->val[i]);
    if (b->err) tensor_free(b->err[i]);
    if (b->rel) tensor_free(b->rel[i]);
  }
  for (int i = 0; i < 4; i++) tensor_free(b->tmp[i]);
  tensor_free(b->out);
  free(b->keep);
  free(b->val);
  free(b->err);
  free(b->rel);
  free(b->move);
  free(b->args);
  free(b);
}

static Tensor *b_new(Bnd *b, const Node *n, const Shape *s) {
  Tensor *t = tensor_new(s, EK_REAL);
  if (!t) ts_error(b->g->ctx, n->site, "out of memory bounding the error of a tensor of %lld elements",
                   (long long)shape_numel(s));
  return t;
}

/* Run n's own op on the operand tensors args (the interpreter's kernel:
   layout ops move bounds like values; matmul multiplies |A|, |B|, bounds). */
static Tensor *run_op(Bnd *b, const Node *n, Tensor **args) {
  for (int j = 0; j < n->nin; j++) b->move[n->in[j]->id] = args[j];
  Tensor *t = interp_run_ex(b->g, NULL, b->move, n, NULL, NULL);
  for (int j = 0; j < n->nin; j++) b->move[n->in[j]->id] = NULL;
  return t;
}

/* ---- one element's bounds ---- */

/* The relative bound that an absolute bound e at v implies. */
static double r_of(double v, double e) {
  if (e == 0) return 0;
  return e < fabs(v) ? -log1p(-e / fabs(v)) : INFINITY;
}

/* The bounds at an infinite or NaN value: 0 if certain, else infinite. */
static Eb at_nonfinite(double v, bool certain) {
  double e = !isnan(v) && certain ? 0 : INFINITY;
  return (Eb){e, e};
}

/* Reconcile e and r at a finite v: each is at most what the other implies. */
static Eb settle(double v, Eb b) {
  if (isnan(b.e)) b.e = INFINITY;
  if (isnan(b.r)) b.r = INFINITY;
  double from_r = v == 0 ? (isfinite(b.r) ? 0 : INFINITY) : fabs(v) * expm1(b.r);
  if (from_r < b.e) b.e = from_r;
  double from_e = r_of(v, b.e);
  if (from_e < b.r) b.r = from_e;
  return b;
}

/* The smallest normal number of the type whose unit roundoff is u: float16
   (u = 2^-11) has float16's range, every other type here float32's
   (float32, bfloat16 and their accumulators). */
static double smallest_normal(double u) { return u == 0x1p-11 ? 0x1p-14 : 0x1p-126; }

/* What one rounding may add near zero beyond u·|v|: half the spacing of the
   subnormals, u times the smallest normal (Higham's model with underflow,
   fl(x op y) = (x op y)(1 + δ) + η); later ops amplify it like any error. */
static double underflow(double u) { return u * smallest_normal(u); }

/* Add the rounding of a result v whose computed value is within b before it
   is rounded with unit roundoff u: u*|v| plus the underflow term, but
   nothing when the computed value is v itself (e = 0) and v is a number of
   the type (its significand and, below the smallest normal, the subnormals'
   spacing). */
static Eb rounded(double u, double v, Eb b) {
  if (!isfinite(v)) return at_nonfinite(v, b.e == 0);
  if (u > 0) {
    /* v over the spacing of the type's numbers near it (a subnormal's
       spacing is fixed): an integer where v is representable */
    double s = v != 0 ? v / fmax(ldexp(2 * u, ilogb(v)), 2 * underflow(u)) : 0;
    if (b.e != 0 || s != floor(s)) {
      b.e += u * fabs(v) + underflow(u);
      /* relative only where the result is normal: a subnormal one has fewer bits */
      b.r = fabs(v) >= smallest_normal(u) ? b.r - log1p(-u) : INFINITY;
    }
  }
  return settle(v, b);
}

/* ---- elementwise ---- */

/* f(a~) against v = f(a) for |a~ - a| <= ea and a~/a within e^ra, before
   f's own rounding: e, and r where f composes relative bounds (infinite
   where it does not). */
static Eb p_unary(Op op, double a, double ea, double ra, double v) {
  double m = fabs(a) - ea > 0 ? fabs(a) - ea : 0; /* the operand interval's point nearest 0 */
  switch (op) {
  case OP_NEG:
  case OP_ABS:
  case OP_CAST: return (Eb){ea, ra};
  case OP_EXP: {
    /* v * expm1(ea), or exp(a + ea) where that product is 0 * inf (an
       underflowed v whose operand's bound is huge); exp(a~)/exp(a) =
       exp(a~ - a) */
    double g = expm1(ea);
    if (v > 0) return (Eb){isfinite(g) ? v * g : exp(a + ea), ea};
    /* v underflowed to 0: exp(a) is not 0, so no relative bound holds
       (settle would make a finite one say the computed value is 0) */
    return (Eb){exp(a + ea), INFINITY};
  }
  case OP_LOG: /* log(a~) - log(a) = log(a~/a) */
    return (Eb){fmin(ea < a ? -log1p(-ea / a) : INFINITY, ra), INFINITY};
  case OP_SQRT: {
    double lo = a - ea;
    if (ea == 0) return (Eb){0, 0};
    /* the computed operand may be negative, unless ra says not */
    return (Eb){lo < 0 ? INFINITY : ea / (sqrt(a) + sqrt(lo)), ra / 2};
  }
  case OP_RSQRT: {
    double lo = a - ea;
    if (ea == 0) return (Eb){0, 0};
    /* 1/sqrt(lo) - 1/sqrt(a) */
    return (Eb){!(lo > 0) ? INFINITY : ea / ((sqrt(a) + sqrt(lo)) * sqrt(a) * sqrt(lo)), ra / 2};
  }
  case OP_TANH: {
    double c = cosh(m);
    return (Eb){fmin(ea / (c * c), 2), INFINITY};
  }
  case OP_ERF: return (Eb){fmin(ea * 1.1283791670955126 * exp(-m * m), 2), INFINITY};
  case OP_SIGMOID: {
    double t = exp(-m);
    return (Eb){fmin(ea * t / ((1 + t) * (1 + t)), 1), INFINITY};
  }
  case OP_RELU: {
    double r = a > 0 ? a : 0, hi = a + ea > 0 ? a + ea : 0, lo = a - ea > 0 ? a - ea : 0;
    /* a certain sign keeps the relative bound (0 stays 0) */
    return (Eb){fmax(hi - r, r - lo), a > 0 ? ra : isfinite(ra) ? 0 : INFINITY};
  }
  case OP_COUNT:
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
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
  case OP_NE:
  case OP_SELECT:
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN:
  case OP_MATMUL:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER: break;
  }
  return (Eb){INFINITY, INFINITY};
}

/* a^b: the a-term by the largest |b x^(b-1)| over a's interval, the
   b-term exactly: |a^b~ - a^b| <= |v| expm1(eb |log a|); relatively,
   (a~/a)^b~ a^(b~ - b). */
static Eb p_pow(double a, double b, double ea, double eb, double ra, double v) {
  double e = 0, r = eb == 0 ? fabs(b) * ra : a > 0 ? (fabs(b) + eb) * ra + eb * fabs(log(a)) : INFINITY;
  if (ea > 0 && b != 0) {
    double p = b - 1, hi = fabs(a) + ea, lo = fabs(a) - ea;
    if (b != floor(b) && a - ea < 0) e = INFINITY; /* a negative base to a fractional power */
    else if (p >= 0) e += fabs(b) * pow(hi, p) * ea;
    else if (lo > 0) e += fabs(b) * pow(lo, p) * ea;
    else e = INFINITY;
  }
  if (eb > 0) {
    if (a > 0) e += fabs(v) * expm1(eb * fabs(log(a)));
    else if (!(a == 0 && b - eb > 0)) e = INFINITY;
  }
  return (Eb){e, r};
}

static bool same_sign(double a, double b) { return (a >= 0 && b >= 0) || (a <= 0 && b <= 0); }

/* a~ OP b~ against v = a OP b, before its rounding: products and quotients
   add relative bounds; a sum (or max, min) of two values of one sign has
   the larger relative bound of the two. */
static Eb p_binary(Op op, double a, double b, double ea, double eb, double ra, double rb, double v) {
  double rsum = fmax(ra, rb);
  switch (op) {
  case OP_ADD: return (Eb){ea + eb, same_sign(a, b) ? rsum : INFINITY};
  case OP_SUB: return (Eb){ea + eb, same_sign(a, -b) ? rsum : INFINITY};
  /* and where one operand has only an absolute bound (a value that may
     have underflowed: its relative bound is gone) and the other a relative
     one: a~b~ - ab = (a~ - a) b~ + a (b~ - b) with |b~| <= |b| e^rb */
  case OP_MUL: {
    double mixed = fmin(ea * fabs(b) * exp(rb) + fabs(a * b) * expm1(rb), eb * fabs(a) * exp(ra) + fabs(a * b) * expm1(ra));
    return (Eb){fmin(fabs(b) * ea + fabs(a) * eb + ea * eb, isnan(mixed) ? INFINITY : mixed), ra + rb};
  }
  case OP_DIV: {
    double ab = fabs(b);
    double mixed = ab > 0 ? ea * exp(rb) / ab + fabs(a / b) * expm1(rb) : INFINITY;
    return (Eb){fmin(!(eb < ab) ? INFINITY : (ab * ea + fabs(a) * eb) / (ab * (ab - eb)), isnan(mixed) ? INFINITY : mixed),
                ra + rb};
  }
  case OP_POW: return p_pow(a, b, ea, eb, ra, v);
  case OP_IDIV: { /* of exact integers, exact; of anything else, unbounded (a quotient can jump) */
    double e = ea == 0 && eb == 0 ? 0 : INFINITY;
    return (Eb){e, e};
  }
  case OP_MAX:
  case OP_MIN: return (Eb){fmax(ea, eb), same_sign(a, b) ? rsum : INFINITY};
  case OP_COUNT:
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
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
  case OP_CAST:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE:
  case OP_SELECT:
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN:
  case OP_MATMUL:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER: break;
  }
  return (Eb){INFINITY, INFINITY};
}

/* Does an operand (x, bound e) leave an infinite result certain?  An
   infinity with a finite bound is certain; a finite operand must keep its
   sign and stay nonzero (a product, a quotient), or only stay finite (a
   sum, max, min). */
static bool keeps_infinity(double x, double e, bool additive) {
  if (!isfinite(e)) return false;
  return isinf(x) || e == 0 || e < fabs(x) || additive;
}

/* Could `a OP b` come out the other way? */
static double flips(double a, double b, double ea, double eb) {
  if (isnan(a) || isnan(b)) return 1;
  double d = a - b;
  if (isnan(d)) return isfinite(ea) && isfinite(eb) ? 0 : 1; /* the same infinity on both sides */
  /* within INTERP_BOUND_C times the operands' bounds: a math function
     that errs by up to an ulp (tanhf beside a maximum of the same values
     computed by another kernel) may tie where float64 does not */
  return ea + eb > 0 && !(fabs(d) > INTERP_BOUND_C * (ea + eb)) ? 1 : 0;
}

/* The operands' values (v), absolute (e) and relative (r) bounds. */
typedef struct Ops { Tensor *v[3], *e[3], *r[3]; } Ops;

static void bound_unary(const Node *n, const Ops *o, const Tensor *V, Tensor *E, Tensor *R, double u) {
  int64_t N = shape_numel(&V->shape);
  for (int64_t i = 0; i < N; i++) {
    double a = o->v[0]->data[i], ea = o->e[0]->data[i], ra = o->r[0]->data[i], v = V->data[i];
    Eb b;
    if (!isfinite(v)) b = at_nonfinite(v, isfinite(ea) && (isinf(a) || ea == 0));
    else b = rounded(u, v, p_unary(n->op, a, ea, ra, v));
    E->data[i] = b.e;
    R->data[i] = b.r;
  }
}

static void bound_binary(const Node *n, const Ops *o, const Tensor *V, Tensor *E, Tensor *R, double u) {
  Iter it;
  iter_init(&it, &V->shape);
  iter_bcast(&it, 0, &o->v[0]->shape, 1);
  iter_bcast(&it, 1, &o->v[1]->shape, 1);
  int64_t N = shape_numel(&V->shape), len = iter_len(&it), sa = iter_inner(&it, 0), sb = iter_inner(&it, 1);
  bool compare = op_info[n->op].cls == OPC_COMPARE;
  bool additive = n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MAX || n->op == OP_MIN;
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 2))
    for (int64_t j = 0; j < len; j++) {
      int64_t oa = it.off[0] + j * sa, ob = it.off[1] + j * sb;
      double a = o->v[0]->data[oa], b = o->v[1]->data[ob], ea = o->e[0]->data[oa], eb = o->e[1]->data[ob];
      double ra = o->r[0]->data[oa], rb = o->r[1]->data[ob], x = V->data[i + j];
      Eb bd;
      if (compare) {
        double f = flips(a, b, ea, eb);
        bd = (Eb){f, f > 0 ? INFINITY : 0};
      } else if (!isfinite(x)) {
        bd = at_nonfinite(x, keeps_infinity(a, ea, additive) && keeps_infinity(b, eb, additive));
      } else {
        bd = rounded(u, x, p_binary(n->op, a, b, ea, eb, ra, rb, x));
      }
      E->data[i + j] = bd.e;
      R->data[i + j] = bd.r;
    }
}

static void bound_select(const Ops *o, const Tensor *V, Tensor *E, Tensor *R, double u) {
  Iter it;
  iter_init(&it, &V->shape);
  for (int k = 0; k < 3; k++) iter_bcast(&it, k, &o->v[k]->shape, 1);
  int64_t N = shape_numel(&V->shape), len = iter_len(&it), s[3];
  for (int k = 0; k < 3; k++) s[k] = iter_inner(&it, k);
  for (int64_t i = 0; i < N; i += len, iter_next_row(&it, 3))
    for (int64_t j = 0; j < len; j++) {
      int64_t at[3];
      for (int k = 0; k < 3; k++) at[k] = it.off[k] + j * s[k];
      double c = o->v[0]->data[at[0]], ec = o->e[0]->data[at[0]], x = o->v[1]->data[at[1]], y = o->v[2]->data[at[2]];
      double ex = o->e[1]->data[at[1]], ey = o->e[2]->data[at[2]], r = V->data[i + j];
      Eb b;
      if (ec == 0) b = c != 0 ? (Eb){ex, o->r[1]->data[at[1]]} : (Eb){ey, o->r[2]->data[at[2]]};
      else b = (Eb){(x == y ? 0 : fabs(x - y)) + fmax(ex, ey), INFINITY}; /* either branch may be taken */
      b = isfinite(r) ? rounded(u, r, b) : at_nonfinite(r, isfinite(b.e));
      E->data[i + j] = b.e;
      R->data[i + j] = b.r;
    }
}

/* ---- reductions and products ---- */

static void bound_reduce(const Node *n, const Ops *o, const Tensor *V, Tensor *E, Tensor *R, double u, double uacc) {
  const Tensor *A = o->v[0];
  int ax = n->axis;
  int64_t len = A->shape.d[ax].n, outer = dims_prod(&A->shape, 0, ax), inner = dims_prod(&A->shape, ax + 1, A->shape.rank);
  for (int64_t oo = 0; oo < outer; oo++)
    for (int64_t i = 0; i < inner; i++) {
      double se = 0, sa = 0, emax = 0, rmax = 0, rfin = 0, eunder = 0;
      /* amax: the computed maximum lies in [max (t - e), max (t + e)]
         (amin: [min (t - e), min (t + e)]), so only the terms that can
         reach the extremum count (a masked -1e9 with an error of 64 does
         not widen a row's maximum of O(1) values) */
      double top = -INFINITY, bot = -INFINITY;
      if (n->op == OP_AMIN) top = bot = INFINITY;
      bool finite = true, pos = true, neg = true;
      for (int64_t k = 0; k < len; k++) {
        int64_t at = (oo * len + k) * inner + i;
        double t = A->data[at], et = o->e[0]->data[at], rt = o->r[0]->data[at];
        finite &= isfinite(et) != 0;
        pos &= t >= 0;
        neg &= t <= 0;
        se += et;
        sa += isfinite(t) ? fabs(t) : 0;
        emax = fmax(emax, et);
        rmax = fmax(rmax, rt);
        if (n->op == OP_AMAX) top = fmax(top, t + et), bot = fmax(bot, t - et);
        if (n->op == OP_AMIN) top = fmin(top, t + et), bot = fmin(bot, t - et);
        /* terms with only an absolute bound (they may have underflowed)
           join the relative bound of the rest as their share of the sum */
        if (isfinite(rt)) rfin = fmax(rfin, rt);
        else eunder += et;
      }
      if (n->op == OP_SUM && !isfinite(rmax) && sa > 0 && isfinite(eunder)) {
        /* one sign: the others within [e^-r, e^r] of their sum, these within
           eunder of theirs, so Σt~/Σt lies in [e^-r - eunder/Σ|t|, e^r + eunder/Σ|t|] */
        double lo = exp(-rfin) - eunder / sa;
        rmax = lo > 0 ? fmax(log(exp(rfin) + eunder / sa), -log(lo)) : INFINITY;
      }
      double v = V->data[oo * inner + i], nu = (double)len * uacc;
      Eb b;
      if (!isfinite(v)) b = at_nonfinite(v, finite);
      else if (n->op == OP_SUM) /* terms of one sign: within their largest relative bound, plus accumulation */
        b = rounded(u, v, (Eb){se + nu * sa + (uacc > 0 ? (double)len * underflow(uacc) : 0),
                               (pos || neg) && nu < 1 ? rmax - log1p(-nu) : INFINITY});
      else {
        /* within the interval's reach of v; emax where it says nothing finer
           (an infinite or NaN term) */
        double reach = fmax(top - v, v - bot);
        b = rounded(u, v, (Eb){isnan(reach) || reach > emax ? emax : reach, pos || neg ? rmax : INFINITY});
      }
      E->data[oo * inner + i] = b.e;
      R->data[oo * inner + i] = b.r;
    }
}

static bool any_nonzero(const Tensor *t) {
  int64_t N = shape_numel(&t->shape);
  for (int64_t i = 0; i < N; i++)
    if (t->data[i] != 0) return true;
  return false;
}

/* t[i] := |x[i]| (+ e[i] when e is given) */
static Tensor *magnitude(Bnd *b, int slot, const Node *n, const Tensor *x, const Tensor *e) {
  Tensor *t = b->tmp[slot] = b_new(b, n, &x->shape);
  int64_t N = shape_numel(&x->shape);
  for (int64_t i = 0; i < N; i++) t->data[i] = fabs(x->data[i]) + (e ? e->data[i] : 0);
  return t;
}

static void drop_tmp(Bnd *b) {
  for (int i = 0; i < 4; i++) tensor_free(b->tmp[i]), b->tmp[i] = NULL;
}

/* E := (|A| + EA) EB + EA |B| + K uacc |A||B| + u |V|, each product through
   the interpreter's matmul (batch broadcasting included). */
static void bound_matmul(Bnd *b, const Node *n, const Tensor *V, Tensor *E, Tensor *R, double u, double uacc) {
  const Node *x = n->in[0], *y = n->in[1];
  const Tensor *A = b->val[x->id], *B = b->val[y->id], *EA = b->err[x->id], *EB = b->err[y->id];
  int64_t K = A->shape.d[A->shape.rank - 1].n, N = shape_numel(&V->shape);
  bool ea = any_nonzero(EA), eb = any_nonzero(EB);
  Tensor *absA = magnitude(b, 0, n, A, NULL), *absB = magnitude(b, 1, n, B, NULL);
  Tensor *args[2] = {absA, absB};
  Tensor *P = b->tmp[3] = run_op(b, n, args); /* |A||B| */
  for (int64_t i = 0; i < N; i++) E->data[i] = (double)K * (uacc * P->data[i] + (uacc > 0 ? underflow(uacc) : 0));
  tensor_free(P);
  b->tmp[3] = NULL;
  if (x == y && ea) {
    /* A A: (|A| + EA)(|A| + EA) - |A||A|, one operand slot for both */
    Tensor *apA = magnitude(b, 2, n, A, EA);
    Tensor *sq[2] = {apA, apA}, *abs2[2] = {absA, absA};
    P = b->tmp[3] = run_op(b, n, sq);
    Tensor *Q = run_op(b, n, abs2);
    for (int64_t i = 0; i < N; i++) E->data[i] += fmax(P->data[i] - Q->data[i], 0);
    tensor_free(Q);
  } else {
    if (eb) {
      Tensor *pa[2] = {ea ? magnitude(b, 2, n, A, EA) : absA, (Tensor *)EB};
      P = b->tmp[3] = run_op(b, n, pa);
      for (int64_t i = 0; i < N; i++) E->data[i] += P->data[i];
      tensor_free(P);
      b->tmp[3] = NULL;
    }
    if (ea) {
      Tensor *pb[2] = {(Tensor *)EA, absB};
      P = b->tmp[3] = run_op(b, n, pb);
      for (int64_t i = 0; i < N; i++) E->data[i] += P->data[i];
    }
  }
  drop_tmp(b);
  for (int64_t i = 0; i < N; i++) {
    double v = V->data[i];
    Eb bd = isfinite(v) ? rounded(u, v, (Eb){E->data[i], INFINITY}) : at_nonfinite(v, false);
    E->data[i] = bd.e;
    R->data[i] = bd.r;
  }
}

/* Layout ops: bounds move with values (a gather's index operand is its
   value); an index that may be wrong makes every element unbounded. */
static void bound_layout(Bnd *b, const Node *n, const Ops *o, const Tensor *V, double u) {
  bool wrong_index = n->op == OP_GATHER && any_nonzero(o->e[1]);
  Tensor **bounds[2] = {b->err, b->rel}, *moved[2];
  for (int w = 0; w < 2; w++) {
    for (int j = 0; j < n->nin; j++) b->args[j] = bounds[w][n->in[j]->id];
    if (n->op == OP_GATHER) b->args[1] = o->v[1];
    moved[w] = (w ? b->rel : b->err)[n->id] = run_op(b, n, b->args);
  }
  int64_t N = shape_numel(&V->shape);
  for (int64_t i = 0; i < N; i++) {
    Eb bd = wrong_index ? (Eb){INFINITY, INFINITY} : rounded(u, V->data[i], (Eb){moved[0]->data[i], moved[1]->data[i]});
    moved[0]->data[i] = bd.e;
    moved[1]->data[i] = bd.r;
  }
}

/* ---- one node ---- */

static void bound_node(Bnd *b, const Node *n) {
  const Tensor *V = b->val[n->id];
  Ops o = {0};
  for (int j = 0; j < n->nin && j < 3; j++) {
    int id = n->in[j]->id;
    o.v[j] = b->val[id], o.e[j] = b->err[id], o.r[j] = b->rel[id];
  }
  bool exact = n->op == OP_INPUT || (b->given && b->given[n->id]);
  double u = b->u && n->kind == EK_REAL ? b->u[n->id] : 0, uacc = b->uacc ? b->uacc[n->id] : 0;
  OpClass cls = op_info[n->op].cls;
  if (cls == OPC_LAYOUT || cls == OPC_CONCAT || cls == OPC_GATHER) {
    if (!exact) {
      bound_layout(b, n, &o, V, u);
      return;
    }
  }
  Tensor *E = b->err[n->id] = b_new(b, n, &V->shape), *R = b->rel[n->id] = b_new(b, n, &V->shape);
  if (exact) return; /* zeros */
  switch (cls) {
  case OPC_LEAF:
    if (n->op == OP_CONST) {
      Eb c = rounded(u, V->data[0], (Eb){0, 0});
      E->data[0] = c.e;
      R->data[0] = c.r;
    }
    break;
  case OPC_UNARY: bound_unary(n, &o, V, E, R, u); break;
  case OPC_BINARY:
  case OPC_COMPARE: bound_binary(n, &o, V, E, R, u); break;
  case OPC_SELECT: bound_select(&o, V, E, R, u); break;
  case OPC_REDUCE: bound_reduce(n, &o, V, E, R, u, uacc); break;
  case OPC_MATMUL: bound_matmul(b, n, V, E, R, u, uacc); break;
  case OPC_LAYOUT:
  case OPC_CONCAT:
  case OPC_GATHER: break;
  }
  if (n->kind == EK_BOOL) { /* a boolean is right or flipped */
    int64_t N = shape_numel(&E->shape);
    for (int64_t i = 0; i < N; i++) {
      bool f = E->data[i] > 0;
      E->data[i] = f;
      R->data[i] = f ? INFINITY : 0;
    }
  }
}

/* ---- the run ---- */

static Tensor *bound_all(Bnd *b, Tensor **inputs, const Node *target, Tensor **bound) {
  Graph *g = b->g;
  b->out = interp_run_ex(g, inputs, b->given, target, b->keep, b->val);
  for (int i = 0; i <= target->id; i++)
    if (b->val[i]) bound_node(b, g->nodes[i]);
  *bound = b->err[target->id];
  b->err[target->id] = NULL;
  Tensor *out = b->out;
  b->out = NULL;
  return out;
}

/* bound_all under a jmp_buf of its own: on an unwind, frees b and passes
   it on to the caller's jmp_buf (as interp.c's run_guarded does). */
static Tensor *bound_guarded(Bnd *b, Tensor **inputs, const Node *target, Tensor **bound) {
  Ctx *c = b->g->ctx;
  jmp_buf here;
  jmp_buf *volatile prev = c->unwind;
  if (prev) {
    if (setjmp(here)) {
      c->unwind = prev;
      bnd_free(b);
      longjmp(*prev, 1);
    }
    c->unwind = &here;
  }
  Tensor *out = bound_all(b, inputs, target, bound);
  c->unwind = prev;
  bnd_free(b);
  return out;
}

Tensor *interp_bound(Graph *g, Tensor **inputs, Tensor **given, const Node *target, const double *u,
                     const double *uacc, Tensor **bound) {
  if (!target) target = g->output;
  if (!target) ts_fatal(g->ctx, "interp: the graph has no output");
  size_t nn = (size_t)(g->nnodes > 0 ? g->nnodes : 1);
  Bnd *b = calloc(1, sizeof *b);
  if (b) {
    b->g = g;
    b->given = given;
    b->u = u;
    b->uacc = uacc;
    b->keep = malloc(nn * sizeof *b->keep);
    b->val = calloc(nn, sizeof *b->val);
    b->err = calloc(nn, sizeof *b->err);
    b->rel = calloc(nn, sizeof *b->rel);
    b->move = calloc(nn, sizeof *b->move);
    int most = 1;
    for (int i = 0; i < g->nnodes; i++) most = g->nodes[i]->nin > most ? g->nodes[i]->nin : most;
    b->args = calloc((size_t)most, sizeof *b->args);
  }
  if (!b || !b->keep || !b->val || !b->err || !b->rel || !b->move || !b->args) {
    bnd_free(b);
    ts_fatal(g->ctx, "out of memory starting the error bound");
  }
  for (size_t i = 0; i < nn; i++) b->keep[i] = true;
  *bound = NULL;
  return bound_guarded(b, inputs, target, bound);
}
