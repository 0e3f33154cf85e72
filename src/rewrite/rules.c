/*
 * rules.c: the rule table (rules.def, parsed once on first use) and the
 * side conditions rules may name.
 *
 * A condition is a C predicate over a match's view: the facts (shape, kind,
 * constant, sign) of its class variables and the attributes its attribute
 * variables bound.  Conditions are about shapes and signs only, so the rule
 * checks can evaluate them on concrete instances with no e-graph.
 *
 *   const_along(?r, ?x, AX)  ?r is constant along axis AX of ?x: broadcast against ?x it has
 *                            size 1 there (or it is a uniform constant).  A negative literal AX
 *                            counts from the end (right-aligned, any ranks); an attribute
 *                            variable AX is an axis of ?x's frame, so ?r may not have a higher
 *                            rank than ?x (then ?x alone spans the frame AX was bound in).
 *   positive(?x)             ?x > 0 everywhere (the sign analysis says so)
 *   real(?x)                 ?x holds reals (not integers or booleans)
 *   unit_along(?i, AX)       ?i has size 1 along axis AX
 *   scalar(?x)               ?x has rank 0
 */
#include <stdlib.h>
#include <string.h>

#include "egraph.h"

/* ---- conditions ---- */

static const EgFacts *arg_class(const CondArg *a, const MatchView *m) {
  return a->kind == CA_CLASS ? m->v[a->slot] : NULL;
}

/* An axis argument: a literal, or an attribute variable's (normalized) axis. */
static bool arg_axis(const CondArg *a, const MatchView *m, int *ax) {
  if (a->kind == CA_INT) return *ax = a->lit, true;
  if (a->kind == CA_ATTR && m->a[a->slot]) return *ax = m->a[a->slot]->axis, true;
  return false;
}

static bool c_const_along(const CondArg *args, const MatchView *m) {
  const EgFacts *r = arg_class(&args[0], m), *x = arg_class(&args[1], m);
  int ax;
  if (!r || !x || !arg_axis(&args[2], m, &ax)) return false;
  int j;
  if (args[2].kind == CA_INT && ax < 0) {
    j = r->shape.rank + ax;
  } else {
    if (r->shape.rank > x->shape.rank || ax >= x->shape.rank) return false;
    j = ax - (x->shape.rank - r->shape.rank);
  }
  return r->is_const || j < 0 || r->shape.d[j].n == 1;
}

static bool c_positive(const CondArg *args, const MatchView *m) {
  const EgFacts *x = arg_class(&args[0], m);
  return x && x->sign == SIGN_POS;
}

static bool c_real(const CondArg *args, const MatchView *m) {
  const EgFacts *x = arg_class(&args[0], m);
  return x && x->kind == EK_REAL;
}

static bool c_unit_along(const CondArg *args, const MatchView *m) {
  const EgFacts *x = arg_class(&args[0], m);
  int ax;
  if (!x || !arg_axis(&args[1], m, &ax)) return false;
  ax = axis_norm(ax, x->shape.rank);
  return ax >= 0 && x->shape.d[ax].n == 1;
}

static bool c_scalar(const CondArg *args, const MatchView *m) {
  const EgFacts *x = arg_class(&args[0], m);
  return x && x->shape.rank == 0;
}

static const CondDef conds[] = {
    {"const_along", 3, c_const_along, "?r is constant along axis AX of ?x"},
    {"positive", 1, c_positive, "?x > 0 by the sign analysis"},
    {"real", 1, c_real, "?x holds reals"},
    {"unit_along", 2, c_unit_along, "?i has size 1 along axis AX"},
    {"scalar", 1, c_scalar, "?x has rank 0"},
};

const CondDef *cond_lookup(const char *name) {
  for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
    if (!strcmp(conds[i].name, name)) return &conds[i];
  return NULL;
}

bool rule_conds_hold(const Rule *r, const MatchView *m) {
  for (int i = 0; i < r->nconds; i++)
    if (!r->conds[i].def->fn(r->conds[i].args, m)) return false;
  return true;
}

/* ---- the table ---- */

static const RwRule table[] = {
#define X(name, family, lhs, rhs, cond, unsafe, doc) {#name, family, lhs, rhs, cond, unsafe, doc},
#include "rules.def"
#undef X
};
#define NRULES (int)(sizeof table / sizeof table[0])

static Rule parsed[NRULES];
static Arena *rules_arena; /* lives as long as the program */

const Rule *rw_rules(void) {
  if (rules_arena) return parsed;
  rules_arena = arena_new();
  for (int i = 0; i < NRULES; i++) {
    char err[512];
    if (!rule_parse(rules_arena, &table[i], &parsed[i], err, sizeof err)) {
      fprintf(stderr, "tilesmith: internal error: rule %s in rules.def: %s\n", table[i].name, err);
      abort();
    }
  }
  return parsed;
}

int rw_nrules(void) { return NRULES; }
const RwRule *rw_rule(int i) { return i >= 0 && i < NRULES ? &table[i] : NULL; }

int rw_rule_find(const char *name) {
  for (int i = 0; i < NRULES; i++)
    if (!strcmp(table[i].name, name)) return i;
  return -1;
}
