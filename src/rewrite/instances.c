/*
 * instances.c: concrete instances of a rule, for checking it.
 *
 * The rule checks (Z3 in tests/rules/prove_rules.c, float64 in
 * tests/unit/test_rewrite.c) need the rule at small concrete shapes where
 * it applies.  This file enumerates them: every class variable takes each
 * shape of a small domain (rank 0 to 3, sizes 1 to 3), every attribute
 * variable each value of its kind (axes 0..2, the non-identity permutations
 * of rank 2 and 3, the same shape domain for reshape targets), every op
 * variable each op of its class, and every variable a positive() condition
 * names is tried positive and unconstrained.  An assignment is an instance
 * if the lhs is well-formed with no identity layout node in it (the
 * e-graph would fold one away), the rhs is well-formed with the lhs's shape
 * and kind, and the conditions hold (or, asked for, fail: those are the
 * matches a condition must reject).  Integer leaves are a gather's indices,
 * bounded by the gathered axis.
 *
 * Of the many instances, a varied few are kept: sorted by how informative
 * they are (dimensions of size at least 2, sizes 2 and 3 both present so
 * that axes of equal size are not confused; small enough for Z3), then taken
 * greedily so that no two share a signature (each leaf's rank and size-1
 * axes, the attributes, the ops), at most per_op for each choice of the op
 * variables.
 */
#include <stdlib.h>
#include <string.h>

#include "egraph.h"

#define NSHAPES 40

static void shape_domain(Shape out[NSHAPES]) {
  int k = 0;
  out[k++] = (Shape){.rank = 0};
  for (int a = 1; a <= 3; a++) out[k++] = (Shape){.rank = 1, .d = {{a, NULL}}};
  for (int a = 1; a <= 3; a++)
    for (int b = 1; b <= 3; b++) out[k++] = (Shape){.rank = 2, .d = {{a, NULL}, {b, NULL}}};
  for (int a = 1; a <= 3; a++)
    for (int b = 1; b <= 3; b++)
      for (int c = 1; c <= 3; c++) out[k++] = (Shape){.rank = 3, .d = {{a, NULL}, {b, NULL}, {c, NULL}}};
}

/* The values an attribute variable bound by op ranges over. */
static int attr_domain(Op op, NodeAttrs *out, const Shape *shapes) {
  int k = 0;
  if (op == OP_RESHAPE) {
    for (int i = 0; i < NSHAPES; i++) out[k++] = (NodeAttrs){.shape = shapes[i]};
    return k;
  }
  switch (op_info[op].attrs) {
  case ATTR_AXIS:
  case ATTR_SLICE:
    for (int a = 0; a < 3; a++) out[k++] = (NodeAttrs){.axis = a};
    return k;
  case ATTR_PERM: {
    static const int perms[][3] = {{1, 0, 0}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++) {
      NodeAttrs a = {.nperm = i == 0 ? 2 : 3};
      memcpy(a.perm, perms[i], sizeof perms[i]);
      out[k++] = a;
    }
    return k;
  }
  case ATTR_NONE:
  case ATTR_INPUT:
  case ATTR_VALUE:
  case ATTR_SIZE: break;
  }
  out[k++] = (NodeAttrs){0};
  return k;
}

static int op_domain(OpClass cls, Op *out) {
  int k = 0;
  for (int op = 0; op < OP_COUNT; op++)
    if (op_info[op].cls == cls) out[k++] = (Op)op;
  return k;
}

/* Is variable v a gather's index somewhere in p?  Its bound goes to *bound. */
static void index_vars(const Pat *p, const MatchView *m, bool *is_index, int64_t *bound) {
  if (p->kind != PAT_OP) return;
  if (p->opvar < 0 && p->op == OP_GATHER && p->kids[1]->kind == PAT_VAR) {
    int v = p->kids[1]->var;
    is_index[v] = true;
    EgFacts x;
    if (bound && pat_shape(p->kids[0], m, &x) && p->ak == PA_VAR && m->a[p->aslot]) {
      int ax = axis_norm(m->a[p->aslot]->axis, x.shape.rank);
      if (ax >= 0 && (bound[v] == 0 || x.shape.d[ax].n < bound[v])) bound[v] = x.shape.d[ax].n;
    }
  }
  for (int i = 0; i < p->nkids; i++) index_vars(p->kids[i], m, is_index, bound);
}

static bool positive_var(const Rule *r, int v) {
  for (int i = 0; i < r->nconds; i++)
    if (!strcmp(r->conds[i].def->name, "positive") && r->conds[i].args[0].kind == CA_CLASS &&
        r->conds[i].args[0].slot == v)
      return true;
  return false;
}

typedef struct Cand { RuleInstance in; int score; uint64_t sig, opsig; int order; } Cand;

static int cand_cmp(const void *a, const void *b) {
  const Cand *x = a, *y = b;
  if (x->score != y->score) return y->score - x->score;
  return x->order - y->order;
}

static void score(const Rule *r, Cand *c) {
  int big = 0, has2 = 0, has3 = 0;
  int64_t elems = shape_numel(&c->in.lhs.shape);
  uint64_t sig = 1469598103934665603ULL;
  for (int v = 0; v < r->nvars; v++) {
    const Shape *s = &c->in.leaf[v].shape;
    elems += shape_numel(s);
    uint64_t mask = 0;
    for (int i = 0; i < s->rank; i++) {
      big += s->d[i].n >= 2;
      has2 |= s->d[i].n == 2;
      has3 |= s->d[i].n == 3;
      if (s->d[i].n == 1) mask |= 1u << i;
    }
    sig = hash_mix(sig, (uint64_t)s->rank * 16 + mask);
    sig = hash_mix(sig, (uint64_t)c->in.leaf[v].sign);
  }
  for (int a = 0; a < r->nattrs; a++) {
    const NodeAttrs *at = &c->in.a[a];
    sig = hash_mix(sig, (uint64_t)at->axis);
    for (int i = 0; i < at->nperm; i++) sig = hash_mix(sig, (uint64_t)at->perm[i] + 7);
    sig = hash_mix(sig, (uint64_t)at->shape.rank);
  }
  uint64_t opsig = 0;
  for (int o = 0; o < r->nops; o++) opsig = hash_mix(opsig, (uint64_t)c->in.o[o] + 1);
  c->sig = hash_mix(sig, opsig);
  c->opsig = opsig;
  c->score = big * 10 + 15 * (has2 + has3) - (elems > 40 ? 4 * (int)(elems - 40) : 0);
}

/* The best candidate per signature (open addressing on the signature). */
typedef struct Best { Cand *slot; int cap, n; } Best;

static void best_offer(Best *b, const Cand *c) {
  size_t mask = (size_t)b->cap - 1;
  for (size_t k = c->sig & mask;; k = (k + 1) & mask) {
    Cand *s = &b->slot[k];
    if (s->order < 0) {
      if (2 * (b->n + 1) > b->cap) return; /* full: keep what we have */
      *s = *c;
      b->n++;
      return;
    }
    if (s->sig == c->sig) {
      if (cand_cmp(c, s) < 0) *s = *c;
      return;
    }
  }
}

/* The enumeration: one choice per variable (a class variable's shape, an
   attribute, an op, then the signs), in the order the lhs needs them bottom
   up, so that a subpattern is checked as soon as its choices are made and a
   failing one prunes everything after it. */
typedef enum { CH_SHAPE, CH_ATTR, CH_OP, CH_SIGN } ChoiceKind;
enum { MAXCH = PAT_MAXV * 2 + PAT_MAXA + PAT_MAXO, MAXREADY = 16 };

typedef struct Enum {
  const Rule *r;
  bool holding;
  Shape shapes[NSHAPES];
  NodeAttrs adom[PAT_MAXA][NSHAPES + 8];
  int asize[PAT_MAXA];
  Op odom[PAT_MAXO][OP_COUNT];
  int osize[PAT_MAXO];
  struct { ChoiceKind kind; int slot; } ch[MAXCH];
  int nch;
  const Pat *ready[MAXCH][MAXREADY];  /* lhs op nodes whose last choice is this one */
  int nready[MAXCH];
  RuleInstance in;
  MatchView m;
  Best best;
  int order;
} Enum;

static int add_choice(Enum *e, ChoiceKind k, int slot) {
  for (int i = 0; i < e->nch; i++)
    if (e->ch[i].kind == k && e->ch[i].slot == slot) return i;
  e->ch[e->nch].kind = k;
  e->ch[e->nch].slot = slot;
  return e->nch++;
}

/* Post-order over the lhs: choices in first-use order; returns the index of
   the last choice p needs (-1 if none), and files p under it. */
static int order_choices(Enum *e, const Pat *p) {
  int last = -1, c;
  switch (p->kind) {
  case PAT_VAR: return add_choice(e, CH_SHAPE, p->var);
  case PAT_NUM: return -1;
  case PAT_OP: break;
  }
  for (int i = 0; i < p->nkids; i++)
    if ((c = order_choices(e, p->kids[i])) > last) last = c;
  if (p->opvar >= 0 && (c = add_choice(e, CH_OP, p->opvar)) > last) last = c;
  if (p->ak == PA_VAR && (c = add_choice(e, CH_ATTR, p->aslot)) > last) last = c;
  if (last >= 0 && e->nready[last] < MAXREADY) e->ready[last][e->nready[last]++] = p;
  return last;
}

static void finish(Enum *e) {
  const Rule *r = e->r;
  EgFacts rf;
  e->order++;
  if (!pat_shape_ex(r->lhs, &e->m, true, &e->in.lhs) || rule_conds_hold(r, &e->m) != e->holding ||
      !pat_shape(r->rhs, &e->m, &rf) || !shape_equal(&rf.shape, &e->in.lhs.shape) || rf.kind != e->in.lhs.kind)
    return;
  Cand c;
  c.in = e->in;
  c.order = e->order;
  bool is_index[PAT_MAXV] = {0};
  memset(c.in.bound, 0, sizeof c.in.bound);
  index_vars(r->lhs, &e->m, is_index, c.in.bound);
  c.in.holds = e->holding;
  score(r, &c);
  best_offer(&e->best, &c);
}

static void enumerate(Enum *e, int d) {
  if (d == e->nch) return finish(e);
  int slot = e->ch[d].slot, n = 1;
  switch (e->ch[d].kind) {
  case CH_SHAPE: n = NSHAPES; break;
  case CH_ATTR: n = e->asize[slot]; break;
  case CH_OP: n = e->osize[slot]; break;
  case CH_SIGN: n = positive_var(e->r, slot) ? 2 : 1; break;
  }
  for (int k = 0; k < n; k++) {
    switch (e->ch[d].kind) {
    case CH_SHAPE: e->in.leaf[slot].shape = e->shapes[k]; break;
    case CH_ATTR: e->in.a[slot] = e->adom[slot][k]; break;
    case CH_OP: e->m.o[slot] = e->in.o[slot] = e->odom[slot][k]; break;
    case CH_SIGN: e->in.leaf[slot].sign = k ? SIGN_POS : SIGN_ANY; break;
    }
    bool ok = true;
    EgFacts f;
    for (int i = 0; i < e->nready[d] && ok; i++) ok = pat_shape_ex(e->ready[d][i], &e->m, true, &f);
    if (ok) enumerate(e, d + 1);
  }
}

int rule_instances(const Rule *r, bool holding, int per_op, RuleInstance *out, int max) {
  Enum *e = calloc(1, sizeof *e);
  if (!e) return 0;
  e->r = r;
  e->holding = holding;
  shape_domain(e->shapes);
  for (int a = 0; a < r->nattrs; a++) e->asize[a] = attr_domain(r->attr_op[a], e->adom[a], e->shapes);
  for (int o = 0; o < r->nops; o++) e->osize[o] = op_domain(r->op_class[o], e->odom[o]);
  order_choices(e, r->lhs);
  for (int v = 0; v < r->nvars; v++) add_choice(e, CH_SIGN, v);
  /* kinds are fixed by the pattern: a gather's indices are integers */
  bool is_index[PAT_MAXV] = {0};
  index_vars(r->lhs, &e->m, is_index, NULL);
  for (int v = 0; v < r->nvars; v++) {
    e->in.leaf[v].kind = is_index[v] ? EK_INT : EK_REAL;
    e->m.v[v] = &e->in.leaf[v];
  }
  for (int a = 0; a < r->nattrs; a++) e->m.a[a] = &e->in.a[a];
  e->best.cap = 4096;
  e->best.slot = malloc(sizeof(Cand) * (size_t)e->best.cap);
  if (!e->best.slot) {
    free(e);
    return 0;
  }
  for (int i = 0; i < e->best.cap; i++) e->best.slot[i].order = -1;
  enumerate(e, 0);
  /* the best of each signature, most informative first, per_op of each op choice */
  Best *best = &e->best;
  int nc = 0;
  for (int i = 0; i < best->cap; i++)
    if (best->slot[i].order >= 0) best->slot[nc++] = best->slot[i];
  qsort(best->slot, (size_t)nc, sizeof(Cand), cand_cmp);
  int n = 0;
  uint64_t *opsig = malloc(sizeof(uint64_t) * (size_t)(max > 0 ? max : 1));
  for (int i = 0; opsig && i < nc && n < max; i++) {
    int same = 0;
    for (int j = 0; j < n; j++) same += opsig[j] == best->slot[i].opsig;
    if (same >= per_op) continue;
    opsig[n] = best->slot[i].opsig;
    out[n++] = best->slot[i].in;
  }
  free(opsig);
  free(best->slot);
  free(e);
  return n;
}

void rule_instance_str(const Rule *r, const RuleInstance *in, char *buf, size_t n) {
  size_t k = 0;
  buf[0] = 0;
  for (int v = 0; v < r->nvars && k < n; v++) {
    char s[128];
    shape_str(&in->leaf[v].shape, s, sizeof s);
    k += (size_t)snprintf(buf + k, n - k, "%s?%s%s%s%s", v ? " " : "", r->var_name[v], s,
                          in->leaf[v].kind == EK_INT ? ":int" : "", in->leaf[v].sign == SIGN_POS ? ">0" : "");
  }
  for (int a = 0; a < r->nattrs && k < n; a++) {
    const NodeAttrs *at = &in->a[a];
    if (r->attr_op[a] == OP_RESHAPE) {
      char s[128];
      k += (size_t)snprintf(buf + k, n - k, " @%s=%s", r->attr_name[a], shape_str(&at->shape, s, sizeof s));
    } else if (op_info[r->attr_op[a]].attrs == ATTR_PERM) {
      k += (size_t)snprintf(buf + k, n - k, " @%s=[", r->attr_name[a]);
      for (int i = 0; i < at->nperm && k < n; i++) k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", at->perm[i]);
      if (k < n) k += (size_t)snprintf(buf + k, n - k, "]");
    } else {
      k += (size_t)snprintf(buf + k, n - k, " @%s=%d", r->attr_name[a], at->axis);
    }
  }
  for (int o = 0; o < r->nops && k < n; o++)
    k += (size_t)snprintf(buf + k, n - k, " %%%s=%s", r->op_name[o], op_info[in->o[o]].name);
}
