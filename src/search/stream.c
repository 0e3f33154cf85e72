/*
 * stream.c: the stream law, stated once.
 *
 * A kernel with a STREAM axis j visits j tile by tile.  A member that
 * reduces over j (a sum, amax or amin over j, or a product contracting j)
 * becomes a loop-carried state: it starts at its monoid's identity and
 * folds in one tile at a time (ops.def's monoids).  That is all a plain
 * reduction needs.  The law is about a reduction R whose operand depends on
 * another state D over the same axis (softmax's sum depends on its max):
 * the final D is not known while R streams.  Two homomorphisms make it
 * streamable anyway, and each is checked on the operand's expression:
 *
 *   a factor constant along j leaves the sum:  Σ_j f(D)·g_j = f(D)·Σ_j g_j.
 *     Any factor of R's operand that does not vary with j but depends on D
 *     is applied after the loop (R's "post" factors).  With D a row
 *     statistic and R a product over j this is FlashNorm's row scale in the
 *     epilogue, and the 1/Σ of softmax·V moved after the key loop.
 *
 *   exp turns a shift into a scale:  exp(c·(y_j − D')) = exp(c·(y_j − D))·
 *     exp(c·(D − D')).  When D = max_j y_j (or min) and R's operand holds
 *     the factor exp(c·(y_j − D)) with c > 0 (a number, or a value per row
 *     that the sign analysis proves positive: a temperature, a row scale
 *     pulled out of the max; the terms never exceed 1, so
 *     nothing overflows), R streams with D's running value: each tile's
 *     terms use the current D (−∞ read as 0, so an all-masked prefix adds
 *     zeros), and before a tile is added the state is rescaled by
 *     exp(c·(D_old − D_new)), exactly 0 while nothing but −∞ has been seen.
 *     This is online softmax; with the key loop it is FlashAttention-2, and
 *     the same rescale merges partial states of a split stream
 *     (flash-decoding, split-K).
 *
 *   a shift moves a sum of squares by a square:  Σ_j (y_j − m')² =
 *     Σ_j (y_j − m)² + n·(m − m')² when m is the mean of those n terms.
 *     When D = S/n is the mean of a sum state S = Σ_j y_j over the whole
 *     axis and R sums c²·(y_j − D)², R streams with the running mean: each
 *     tile's terms use m_new = S_seen/n_seen (S read as S_seen·n/n_seen),
 *     and before a tile is added the state grows by c²·n_old·(m_old −
 *     m_new)².  This is Welford's algorithm a tile at a time (Chan's
 *     pairwise merge); after the loop n_seen = n and the mean is exact.
 *     Layer norm's variance streams in the pass of its mean.  (Masked
 *     tiles are refused: the running count is the loop's trip count.  A
 *     stream split across blocks merges the blocks' partials by Chan's
 *     rule in the combine, each block's count that of its chunk.)
 *
 * Any other dependence on a state of the same pass puts R in a later pass
 * over j, where D is final.  A member that varies with j and is stored (a
 * row-streamed softmax's output) is computed in the pass after every state
 * it reads.  A kernel needing more than PLAN_MAX_PASSES passes is refused.
 *
 * Masks.  A select whose condition is built from index values alone
 * (iota comparisons: causal and window masks) can make a whole tile
 * neutral: if, with the condition false everywhere in the tile, every
 * state's operand is its identity (−∞ for amax, 0 for sums and products:
 * exp(−∞) = 0, 0·v = 0 for finite v), the loop skips such tiles; the lowering
 * turns that into loop bounds by interval arithmetic over the tile's index
 * ranges.
 */
#include <math.h>
#include <string.h>

#include "../rewrite/rewrite.h"
#include "plan.h"

static bool is_state(const PKernel *k, const Node *n) {
  OpClass c = op_info[n->op].cls;
  return k->stream >= 0 && k->member[n->id] && (c == OPC_REDUCE || c == OPC_MATMUL) && k->redax[n->id] == k->stream;
}

bool pk_varies(const PKernel *k, const Node *n) {
  if (k->stream < 0 || !pk_has_axes(k, n)) return false;
  for (int d = 0; d < n->shape.rank; d++)
    if (k->dimax[n->id][d] == k->stream) return true;
  return false;
}

static PState *state_of(PKernel *k, const Node *n) {
  for (int i = 0; i < k->nstates; i++)
    if (k->states[i].node == n) return &k->states[i];
  return NULL;
}

/* ---- which states an expression reads ---- */

typedef struct Deps { const Node *d[PLAN_MAX_STATES]; int n; } Deps;

static void deps_add(Deps *s, const Node *d) {
  for (int i = 0; i < s->n; i++)
    if (s->d[i] == d) return;
  if (s->n < PLAN_MAX_STATES) s->d[s->n++] = d;
}

/* The states n reads directly: below n through members that are not states. */
static void direct_states(const PKernel *k, const Node *n, bool top, Deps *out, bool *seen) {
  if (!k->member[n->id] || seen[n->id]) return;
  seen[n->id] = true;
  if (!top && is_state(k, n)) {
    deps_add(out, n);
    return;
  }
  for (int i = 0; i < n->nin; i++) direct_states(k, n->in[i], false, out, seen);
}

/* Does n read (through non-state members) any state of pass p? */
static bool reads_pass(PKernel *k, const Node *n, int p, bool *seen) {
  if (!k->member[n->id] || seen[n->id]) return false;
  seen[n->id] = true;
  if (is_state(k, n)) {
    PState *s = state_of(k, n);
    return s && s->pass == p;
  }
  for (int i = 0; i < n->nin; i++)
    if (reads_pass(k, n->in[i], p, seen)) return true;
  return false;
}

/* ---- the factorization of a state's operand ---- */

typedef struct Fac {
  PKernel *k;
  PState *st;      /* the state being placed */
  int pass;        /* the pass tried */
  bool *seen;      /* scratch for reads_pass */
  int8_t *sign;    /* node_sign's memo (-1: not yet) */
  int nn;
} Fac;

static bool live(Fac *f, const Node *n) {
  memset(f->seen, 0, sizeof(bool) * (size_t)f->nn);
  return reads_pass(f->k, n, f->pass, f->seen);
}

static bool is_const(const Node *n, double *v) {
  if (n->op != OP_CONST) return false;
  *v = n->value;
  return true;
}

typedef struct Atom { const Node *n; double c; } Atom;

/* Decompose an exponent into atoms with constant coefficients. */
static bool affine(const Node *n, double coef, Atom *at, int *na) {
  double v;
  switch (n->op) {
  case OP_ADD: return affine(n->in[0], coef, at, na) && affine(n->in[1], coef, at, na);
  case OP_SUB: return affine(n->in[0], coef, at, na) && affine(n->in[1], -coef, at, na);
  case OP_NEG: return affine(n->in[0], -coef, at, na);
  case OP_MUL:
    if (is_const(n->in[1], &v)) return affine(n->in[0], coef * v, at, na);
    if (is_const(n->in[0], &v)) return affine(n->in[1], coef * v, at, na);
    break;
  case OP_DIV:
    if (is_const(n->in[1], &v) && v != 0) return affine(n->in[0], coef / v, at, na);
    break;
  default: break;
  }
  for (int i = 0; i < *na; i++)
    if (at[i].n == n) {
      at[i].c += coef;
      return true;
    }
  if (*na >= 16) return false;
  at[(*na)++] = (Atom){n, coef};
  return true;
}

/* The one state of the pass being placed among the atoms (ops: what it may
   be), its coefficient in *coef; NULL with *ok true if there is none, with
   *ok false if one is not of those ops or there are two. */
static const Node *live_atom(Fac *f, const Atom *at, int na, Op op1, Op op2, double *coef, bool *ok) {
  const Node *D = NULL;
  *ok = true;
  for (int i = 0; i < na; i++) {
    const Node *a = at[i].n;
    if (at[i].c == 0 || !is_state(f->k, a)) continue;
    PState *ds = state_of(f->k, a);
    if (!ds || ds->pass != f->pass) continue; /* final by now: an offset */
    if ((a->op != op1 && a->op != op2) || D) {
      *ok = false;
      return NULL;
    }
    D = a;
    *coef = at[i].c;
  }
  return D;
}

/* at -= c·(y as an affine form); atoms of y that at lacks are appended
   (append) or refuse the match. */
static bool subtract_affine(Atom *at, int *na, const Node *y, double c, bool append) {
  Atom yat[16];
  int ny = 0;
  if (!affine(y, c, yat, &ny)) return false;
  for (int j = 0; j < ny; j++) {
    bool found = false;
    for (int i = 0; i < *na && !found; i++)
      if (at[i].n == yat[j].n) at[i].c -= yat[j].c, found = true;
    if (!found) {
      if (!append || *na >= 16) return false;
      at[(*na)++] = (Atom){yat[j].n, -yat[j].c};
    }
  }
  return true;
}

/* exp(arg) in a same-pass-dependent position: it must be exp(c·(y − D))
   for D = max y (or exp(c·(D − y)) for D = min y), c > 0, plus offsets
   that neither vary with j nor read a live state.  Compared as affine
   forms, so (y − D)/√d, y/√d − D/√d and a y that is itself a scaled
   score all match. */
static bool exp_law(Fac *f, const Node *arg) {
  PKernel *k = f->k;
  /* exp(F·(...)) with F > 0 constant along j and free of live states (a
     row's own temperature; a row scale the rewrites pulled out of the max:
     exp(r·(y − amax y)) for r = rsqrt of a norm): the law holds for any
     c > 0, a value per row as well as a number, so F joins c */
  const Node *F = NULL;
  for (int o = 0; o < 2 && arg->op == OP_MUL && arg->in[0] != arg->in[1] && !F; o++) {
    const Node *x = arg->in[o];
    if (k->member[x->id] && !pk_varies(k, x) && !live(f, x) && live(f, arg->in[1 - o]) &&
        node_sign(x, f->sign) == SIGN_POS)
      F = x, arg = arg->in[1 - o];
  }
  Atom at[16];
  int na = 0;
  if (!affine(arg, 1.0, at, &na)) return false;
  /* the live max/min state in the exponent */
  double cd = 0;
  bool ok;
  const Node *D = live_atom(f, at, na, OP_AMAX, OP_AMIN, &cd, &ok);
  if (!ok) return false;
  /* an atom the affine form could not open that reads a live state (the
     exponent (e·10)·(y − D), a product of two non-constant factors) hides
     D from the law: refused, so R waits for a pass where D is final */
  for (int i = 0; i < na; i++)
    if (at[i].n != D && at[i].c != 0 && !is_state(k, at[i].n) && live(f, at[i].n)) return false;
  if (!D) return true;
  double c = D->op == OP_AMAX ? -cd : cd;
  if (!(c > 0)) return false;
  /* subtract c·(y − D) (max) or c·(D − y) (min): what remains must be offsets */
  if (!subtract_affine(at, &na, D->in[0], D->op == OP_AMAX ? c : -c, true)) return false;
  for (int i = 0; i < na; i++) {
    const Node *a = at[i].n;
    if (a == D) continue;
    if (fabs(at[i].c) <= 1e-12 * (1 + fabs(c))) continue; /* cancelled: it was part of y */
    /* an offset: constant along j, reading no live state */
    if (a->op == OP_CONST) continue;
    if (!k->member[a->id] || pk_varies(k, a) || live(f, a)) return false;
  }
  /* one law per reduction; a second factor of it (exp(c1·d)·exp(c2·d) =
     exp((c1 + c2)·d)) adds its coefficient: the rescale is their product */
  if (f->st->dep && (f->st->dep != D || f->st->law_f != F)) return false;
  f->st->law_c = f->st->dep ? f->st->law_c + c : c;
  f->st->dep = D;
  f->st->law_f = F;
  return true;
}

/* (d)² in a same-pass-dependent position: d must be c·(y − S/n) for a sum
   state S = Σ_j y_j of this pass over the whole stream axis (n its
   length), compared as affine forms. */
static bool shift_law(Fac *f, const Node *d) {
  Atom at[16];
  int na = 0;
  if (!affine(d, 1.0, at, &na)) return false;
  PKernel *k = f->k;
  double cs = 0;
  bool ok;
  const Node *S = live_atom(f, at, na, OP_SUM, OP_SUM, &cs, &ok);
  if (!S || f->st->dep) return false;
  double n = (double)k->ax[k->stream].size;
  double c = -cs * n; /* d = c·y − (c/n)·S */
  if (!(c != 0)) return false;
  /* subtract c·y: nothing may remain but S */
  if (!subtract_affine(at, &na, S->in[0], c, false)) return false;
  for (int i = 0; i < na; i++)
    if (at[i].n != S && fabs(at[i].c) > 1e-12 * (1 + fabs(c))) return false;
  f->st->dep = S;
  f->st->shift = true;
  f->st->law_c = c;
  return true;
}

static bool add_post(PState *st, const Node *factor, int sign, const Node *at, int keep) {
  if (st->npost >= 4 || st->ndrop >= 8) return false;
  st->post[st->npost].f = factor;
  st->post[st->npost++].sign = sign;
  st->drop[st->ndrop].n = at;
  st->drop[st->ndrop++].keep = keep;
  return true;
}

/* Factor the operand expression n of the state being placed. */
static bool factor(Fac *f, const Node *n) {
  PKernel *k = f->k;
  if (!k->member[n->id] || !live(f, n)) return true; /* independent of the live states */
  if (is_state(k, n)) return false;                  /* the state itself, bare */
  switch (n->op) {
  case OP_MUL:
    if (n->in[0] == n->in[1]) return shift_law(f, n->in[0]);
    /* fallthrough */
  case OP_DIV:
    for (int o = 0; o < 2; o++) {
      const Node *x = n->in[o];
      /* a factor constant along j that reads live states leaves the loop */
      if (k->member[x->id] && !pk_varies(k, x) && live(f, x)) {
        if (n->op == OP_DIV && o == 0) return false;
        if (!add_post(f->st, x, n->op == OP_DIV ? -1 : 1, n, 1 - o)) return false;
        return factor(f, n->in[1 - o]);
      }
    }
    if (n->op == OP_DIV) return factor(f, n->in[0]) && !live(f, n->in[1]);
    return factor(f, n->in[0]) && factor(f, n->in[1]);
  case OP_NEG: return factor(f, n->in[0]);
  case OP_EXP: return exp_law(f, n->in[0]);
  case OP_SELECT: {
    /* select(c, a, 0): the zero scales like anything */
    double v;
    if (live(f, n->in[0])) return false;
    if (is_const(n->in[2], &v) && v == 0) return factor(f, n->in[1]);
    if (is_const(n->in[1], &v) && v == 0) return factor(f, n->in[2]);
    return false;
  }
  default: return false;
  }
}

/* The operand of a state that carries its dependence: a sum's operand, a
   product's left operand (a right operand must not read live states). */
static bool place(Fac *f) {
  const Node *r = f->st->node;
  f->st->dep = NULL;
  f->st->shift = false;
  f->st->npost = f->st->ndrop = 0;
  if (r->op == OP_SUM) return factor(f, r->in[0]);
  if (r->op == OP_MATMUL) return !live(f, r->in[1]) && factor(f, r->in[0]);
  return !live(f, r->in[0]); /* amax/amin: no law */
}

bool plan_stream(Plan *p, PKernel *k) {
  Graph *g = p->g;
  int nn = g->nnodes;
  k->nstates = 0;
  k->npasses = 1;
  k->nmasks = 0;
  if (k->stream < 0) return true;
  /* fresh every time: a copy of the kernel (the search's best
     configuration so far) keeps the states it was priced with */
  k->states = arena_alloc(g->ctx->arena, sizeof(PState) * PLAN_MAX_STATES);
  bool *seen = p->marks->flag_at;
  int8_t *sign = p->marks->sign_at;
  memset(sign, -1, (size_t)nn);
  Fac f = {.k = k, .seen = seen, .sign = sign, .nn = nn};
  for (int i = 0; i < k->members.len; i++) {
    const Node *n = k->members.data[i];
    if (!is_state(k, n)) continue;
    if (k->nstates >= PLAN_MAX_STATES) {
      snprintf(k->why, sizeof k->why, "more than %d loop-carried states", PLAN_MAX_STATES);
      return false;
    }
    PState *st = &k->states[k->nstates++];
    memset(st, 0, sizeof *st);
    st->node = n;
    Deps d = {.n = 0};
    memset(seen, 0, sizeof(bool) * (size_t)nn);
    direct_states(k, n, true, &d, seen);
    int pass = 0;
    for (int j = 0; j < d.n; j++) {
      PState *ds = state_of(k, d.d[j]);
      if (ds && ds->pass > pass) pass = ds->pass;
    }
    st->pass = pass;
    bool same = false;
    for (int j = 0; j < d.n; j++) {
      PState *ds = state_of(k, d.d[j]);
      same |= ds && ds->pass == pass;
    }
    f.st = st;
    f.pass = pass;
    if (same && !place(&f)) {
      /* not streamable against them: a later pass, where they are final */
      st->pass = pass + 1;
      st->dep = NULL;
      st->shift = false;
      st->npost = st->ndrop = 0;
    } else if (!same) {
      st->dep = NULL;
      st->shift = false;
      st->npost = st->ndrop = 0;
    }
    if (st->pass + 1 > k->npasses) k->npasses = st->pass + 1;
  }
  /* outputs that vary with j: in the pass after every state they read */
  for (int i = 0; i < k->outs.len; i++) {
    const Node *o = k->outs.data[i];
    if (!pk_varies(k, o)) continue;
    int pass = 0;
    for (int s = 0; s < k->nstates; s++) {
      memset(seen, 0, sizeof(bool) * (size_t)nn);
      if (reads_pass(k, o, k->states[s].pass, seen) && k->states[s].pass + 1 > pass) pass = k->states[s].pass + 1;
    }
    if (pass + 1 > k->npasses) k->npasses = pass + 1;
  }
  if (k->npasses > PLAN_MAX_PASSES) {
    snprintf(k->why, sizeof k->why, "needs %d passes over the stream axis", k->npasses);
    return false;
  }
  return true;
}
