/* test_rewrite.c: the e-graph (hash-consing, congruence, the analysis, the
   shape guard, limits, extraction and provenance) and one randomized
   float64 test per rewrite rule: each rule is applied through the e-graph to
   varied small instances of its lhs (rule_instances), the lhs and rhs forms
   are extracted and evaluated by the interpreter on random inputs and must
   agree to 1e-9; instances that violate the rule's condition must not fire;
   the planted unsound rules of tests/rules/planted.def must be caught. */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/interp/interp.h"
#include "../../src/rewrite/egraph.h"
#include "unit.h"

static const Pos P0 = {0};

typedef struct Env {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Graph *g;
} Env;

static void env_init(Env *e) {
  e->a = arena_new();
  ctx_init(&e->c, e->a, NULL);
  e->c.unwind = &e->jb;
  e->g = graph_new(&e->c);
}

/* An error unwinding to the test is a failure. */
#define ENV_GUARD(e)                                                           \
  if (setjmp((e).jb)) {                                                        \
    CHECK(!"unexpected error");                                                \
    arena_free((e).a);                                                         \
    return;                                                                    \
  }

static Shape shape2(int64_t a, int64_t b) { return (Shape){.rank = 2, .d = {{a, NULL}, {b, NULL}}}; }

/* The text of a graph. */
static char *graph_text(const Graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  graph_print_text(f, g);
  fclose(f);
  return buf;
}

/* ---- the e-graph core ---- */

TEST(egraph_hashcons_and_congruence) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(2, 3);
  Node *a = ir_input(e.g, "a", ROLE_TENSOR, &s, P0), *b = ir_input(e.g, "b", ROLE_TENSOR, &s, P0);
  Node *ea = ir_unary(e.g, OP_EXP, a, P0), *eb = ir_unary(e.g, OP_EXP, b, P0);
  e.g->output = ir_binary(e.g, OP_ADD, ea, eb, P0);
  EGraph *eg = eg_from_graph(e.g);
  CHECK(eg_num_nodes(eg) == 5);
  CHECK(eg_num_classes(eg) == 5);
  int ca = eg_add_input(eg, a), cb = eg_add_input(eg, b);
  CHECK(ca != cb);
  /* adding an existing node gives its class */
  int cea = eg_add(eg, OP_EXP, &(NodeAttrs){0}, &ca, 1), ceb = eg_add(eg, OP_EXP, &(NodeAttrs){0}, &cb, 1);
  CHECK(cea != ceb);
  CHECK(eg_num_nodes(eg) == 5);
  CHECK(eg_union(eg, ca, cb));
  CHECK(!eg_union(eg, ca, cb));
  /* congruence waits for the rebuild */
  CHECK(eg_find(eg, cea) != eg_find(eg, ceb));
  eg_rebuild(eg);
  CHECK(eg_find(eg, cea) == eg_find(eg, ceb));
  CHECK(eg_num_nodes(eg) == 4); /* exp b is a duplicate of exp a now (a and b stay, in one class) */
  CHECK(eg_num_classes(eg) == 3);
  /* a node the op rule rejects is never added */
  int kids[2] = {ca, eg_add(eg, OP_SUM, &(NodeAttrs){.axis = 1}, &ca, 1)};
  CHECK(kids[1] >= 0);
  CHECK(eg_add(eg, OP_MATMUL, &(NodeAttrs){0}, kids, 2) < 0); /* [2,3] x [2,1] */
  /* identity layout ops are their operand */
  CHECK(eg_add(eg, OP_PERMUTE, &(NodeAttrs){.nperm = 2, .perm = {0, 1}}, &ca, 1) == eg_find(eg, ca));
  CHECK(eg_add(eg, OP_RESHAPE, &(NodeAttrs){.shape = s}, &ca, 1) == eg_find(eg, ca));
  eg_free(eg);
  arena_free(e.a);
}

TEST(egraph_analysis_constants_and_signs) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(2, 3);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &s, P0);
  Node *five = ir_binary(e.g, OP_ADD, ir_const(e.g, 2, P0), ir_const(e.g, 3, P0), P0);
  Node *c5 = ir_const(e.g, 5, P0);
  Node *negz = ir_unary(e.g, OP_NEG, ir_const(e.g, 0, P0), P0);                      /* -0.0: not folded */
  Node *inf = ir_binary(e.g, OP_DIV, ir_const(e.g, 1, P0), ir_const(e.g, 0, P0), P0); /* inf: not folded */
  Node *ex = ir_unary(e.g, OP_EXP, x, P0);
  Node *sq = ir_binary(e.g, OP_MUL, x, x, P0);
  Node *esum = ir_reduce(e.g, OP_SUM, ex, 1, P0);
  Node *nx = ir_unary(e.g, OP_NEG, x, P0);
  Node *rs = ir_unary(e.g, OP_RSQRT, ir_binary(e.g, OP_ADD, ir_reduce(e.g, OP_SUM, sq, 1, P0), ir_const(e.g, 1e-6, P0), P0), P0);
  Node *mix = ir_binary(e.g, OP_SUB, ex, x, P0);
  e.g->output = ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_MUL, five, nx, P0), rs, P0);
  EGraph *eg = eg_from_graph(e.g);
  CHECK(eg_class_of(eg, five) == eg_class_of(eg, c5)); /* 2 + 3 folded, merged with the literal 5 */
  CHECK(eg_facts(eg, eg_class_of(eg, five))->is_const && eg_facts(eg, eg_class_of(eg, five))->value == 5);
  CHECK(!eg_facts(eg, eg_class_of(eg, negz))->is_const);
  CHECK(!eg_facts(eg, eg_class_of(eg, inf))->is_const);
  CHECK(eg_facts(eg, eg_class_of(eg, ex))->sign == SIGN_POS);
  CHECK(eg_facts(eg, eg_class_of(eg, sq))->sign == SIGN_NONNEG);
  CHECK(eg_facts(eg, eg_class_of(eg, esum))->sign == SIGN_POS);
  CHECK(eg_facts(eg, eg_class_of(eg, rs))->sign == SIGN_POS);
  CHECK(eg_facts(eg, eg_class_of(eg, nx))->sign == SIGN_ANY);
  CHECK(eg_facts(eg, eg_class_of(eg, mix))->sign == SIGN_ANY);
  CHECK(eg_facts(eg, eg_class_of(eg, x))->sign == SIGN_ANY);
  Shape kept = {.rank = 2, .d = {{2, NULL}, {1, NULL}}};
  CHECK(shape_equal(&eg_facts(eg, eg_class_of(eg, esum))->shape, &kept));
  CHECK(eg_root(eg) == eg_class_of(eg, e.g->output));
  eg_free(eg);
  arena_free(e.a);
}

/* Folds that underflow are refused: saturating x·1e-300·1e300 − 1/0 once
   folded 1e-300·1e-300 to 0 among its reassociations, after which the
   rules equated the infinity with 1e-300 (x − 1e-300 was emitted); the same
   with x·1e-20·1e20 + log 0 (log 0 became log 1e-20). */
TEST(egraph_underflow_not_folded) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(3, 3);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &s, P0);
  Node *tiny = ir_const(e.g, 1e-300, P0), *zero = ir_const(e.g, 0, P0), *t20 = ir_const(e.g, 1e-20, P0);
  Node *under = ir_binary(e.g, OP_MUL, tiny, tiny, P0);                          /* 1e-600: 0 in IEEE */
  Node *subn = ir_binary(e.g, OP_DIV, tiny, ir_const(e.g, 1e10, P0), P0);         /* subnormal */
  Node *zprod = ir_binary(e.g, OP_MUL, zero, ir_const(e.g, 5, P0), P0);          /* exactly 0 */
  Node *inf = ir_binary(e.g, OP_DIV, ir_const(e.g, 1, P0), zero, P0);
  Node *lhs = ir_binary(e.g, OP_MUL, ir_binary(e.g, OP_MUL, x, tiny, P0), ir_const(e.g, 1e300, P0), P0);
  Node *lg = ir_unary(e.g, OP_LOG, zero, P0);
  Node *rhs = ir_binary(e.g, OP_MUL, ir_binary(e.g, OP_MUL, x, t20, P0), ir_const(e.g, 1e20, P0), P0);
  Node *keep = ir_binary(e.g, OP_ADD, under, ir_binary(e.g, OP_ADD, subn, zprod, P0), P0);
  e.g->output = ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_SUB, lhs, inf, P0),
                          ir_binary(e.g, OP_ADD, ir_binary(e.g, OP_ADD, rhs, lg, P0), keep, P0), P0);
  EGraph *eg = eg_from_graph(e.g);
  CHECK(!eg_facts(eg, eg_class_of(eg, under))->is_const);
  CHECK(!eg_facts(eg, eg_class_of(eg, subn))->is_const);
  CHECK(eg_facts(eg, eg_class_of(eg, zprod))->is_const && eg_facts(eg, eg_class_of(eg, zprod))->value == 0);
  eg_run(eg, &(EgRunOpts){0});
  CHECK(eg_class_of(eg, inf) != eg_class_of(eg, tiny));
  CHECK(!eg_facts(eg, eg_class_of(eg, inf))->is_const);
  CHECK(eg_class_of(eg, zero) != eg_class_of(eg, t20));
  CHECK(eg_class_of(eg, zero) != eg_class_of(eg, tiny));
  eg_free(eg);
  arena_free(e.a);
}

TEST(rule_parse_errors) {
  Arena *a = arena_new();
  Rule r;
  char err[512];
  static const RwRule bad[] = {
      {"x", "t", "(frob ?x)", "?x", NULL, false, ""},                       /* unknown op */
      {"x", "t", "(exp ?x)", "?y", NULL, false, ""},                        /* unbound rhs variable */
      {"x", "t", "(sum ?x)", "(sum ?x)", NULL, false, ""},                  /* rhs attribute missing */
      {"x", "t", "(exp ?x)", "?x", "nosuch(?x)", false, ""},                /* unknown condition */
      {"x", "t", "(exp ?x ?y)", "?x", NULL, false, ""},                     /* arity */
      {"x", "t", "?x", "?x", NULL, false, ""},                              /* lhs not an op */
      {"x", "t", "(sum@?a ?x)", "(permute@?a ?x)", NULL, false, ""},        /* attribute kinds differ */
      {"x", "t", "(exp ?x)", "(iota_along ?x)", NULL, false, ""},           /* needs its axis */
      {"x", "t", "(exp ?x)", "?x", "positive(?x", false, ""},               /* unclosed */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = 0;
    CHECK(!rule_parse(a, &bad[i], &r, err, sizeof err));
    CHECK(err[0] != 0);
  }
  RwRule good = {"g", "t", "(sum@?ax (mul ?x ?r))", "(mul (sum@?ax ?x) ?r)", "const_along(?r, ?x, ?ax)", false, ""};
  CHECK(rule_parse(a, &good, &r, err, sizeof err));
  CHECK(r.nvars == 2 && r.nattrs == 1 && r.nconds == 1);
  /* every row of the table parses */
  CHECK(rw_rules() != NULL);
  CHECK(rw_rule_find("matmul-scale-left") >= 0);
  CHECK(rw_rule_find("no-such-rule") < 0);
  arena_free(a);
}

/* ---- random float64 checks of rules ---- */

/* Prefer the e-nodes a rule made (the rhs form) to those of the graph. */
static double cost_rewritten(const EgTerm *t, void **summary) {
  (void)summary;
  const ENode *n = &t->eg->nodes[t->node];
  double c = op_info[t->op].cls == OPC_LEAF ? 0 : n->rule >= 0 ? 1 : 1e6;
  for (int i = 0; i < t->nin; i++) c += t->kid_cost[i];
  return c;
}

/* Normwise relative difference of two results (NaN and infinities must sit
   at the same places); returns -1 on a shape or NaN/inf mismatch. */
static double rel_diff(const Tensor *x, const Tensor *y) {
  if (!shape_equal(&x->shape, &y->shape)) return -1;
  int64_t n = shape_numel(&x->shape);
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = x->data[i], b = y->data[i];
    if (isnan(a) || isnan(b)) {
      if (!(isnan(a) && isnan(b))) return -1;
      continue;
    }
    if (isinf(a) || isinf(b)) {
      if (a != b) return -1;
      continue;
    }
    num = fmax(num, fabs(a - b));
    den = fmax(den, fabs(b));
  }
  return num / fmax(den, 1e-300);
}

typedef struct Outcome {
  bool built;      /* the instance was set up without errors */
  bool fired;      /* the rule changed the e-graph */
  bool used;       /* the rule is among the rewritten form's rules */
  bool to_var;     /* the lhs became equal to one of its variables */
  int trials, mismatches;
  double worst;
} Outcome;

/* Build r's lhs at instance `in` in an e-graph, run r once, extract both
   forms and compare them on `trials` random inputs. */
static Outcome run_instance(const Rule *r, const RuleInstance *in, int trials, uint64_t seed) {
  Outcome o = {0};
  Env e;
  env_init(&e);
  EGraph *volatile eg = NULL;
  Tensor **volatile inputs = NULL;
  Tensor *volatile lv = NULL, *volatile rv = NULL;
  if (setjmp(e.jb)) {
    o.built = false;
    goto done;
  }
  Node *leaf[PAT_MAXV];
  for (int v = 0; v < r->nvars; v++) {
    Node *n = ir_input(e.g, arena_printf(e.a, "%s", r->var_name[v]),
                       in->leaf[v].kind == EK_INT ? ROLE_INDEX : ROLE_TENSOR, &in->leaf[v].shape, P0);
    leaf[v] = in->leaf[v].sign == SIGN_POS ? ir_unary(e.g, OP_EXP, n, P0) : n;
  }
  e.g->output = leaf[0];
  eg = eg_from_graph(e.g);
  Binding b = {0};
  for (int v = 0; v < r->nvars; v++) {
    int c = eg_add_input(eg, e.g->inputs[v]);
    b.cls[v] = in->leaf[v].sign == SIGN_POS ? eg_add(eg, OP_EXP, &(NodeAttrs){0}, &c, 1) : c;
  }
  for (int a = 0; a < r->nattrs; a++) b.a[a] = in->a[a];
  for (int k = 0; k < r->nops; k++) b.o[k] = in->o[k];
  int root = pat_add(eg, r->lhs, &b);
  if (root < 0) goto done;
  eg_rebuild(eg);
  Graph *lg = eg_extract(eg, root, NULL, NULL, NULL, NULL); /* before the rule runs: the lhs */
  EgRunOpts opts = {.max_iters = 1, .no_backoff = true};
  const EgReport *rep = eg_run_rules(eg, &r, 1, &opts);
  o.fired = rep->niters > 0 && rep->iters[0].applied[0] > 0;
  const char *const *used;
  int nused;
  Graph *rg = eg_extract(eg, root, cost_rewritten, NULL, &used, &nused);
  for (int i = 0; i < nused; i++) o.used |= !strcmp(used[i], r->info.name);
  for (int v = 0; v < r->nvars; v++) o.to_var |= eg_find(eg, root) == eg_find(eg, b.cls[v]);
  o.built = true;
  inputs = calloc((size_t)e.g->ninputs, sizeof(Tensor *));
  Rng rng;
  rng_seed(&rng, seed);
  for (int t = 0; t < trials; t++) {
    for (int v = 0; v < e.g->ninputs; v++) {
      Tensor *x = tensor_new(&in->leaf[v].shape, in->leaf[v].kind);
      int64_t n = shape_numel(&x->shape);
      for (int64_t i = 0; i < n; i++)
        x->data[i] = in->leaf[v].kind == EK_INT ? (double)rng_below(&rng, in->bound[v] > 0 ? in->bound[v] : 1)
                                                : rng_normal(&rng);
      inputs[v] = x;
    }
    lv = interp_run(lg, inputs);
    rv = interp_run(rg, inputs);
    double d = rel_diff(lv, rv);
    o.trials++;
    if (d < 0 || d > 1e-9) o.mismatches++;
    if (d > o.worst || d < 0) o.worst = d < 0 ? INFINITY : d;
    tensor_free(lv);
    tensor_free(rv);
    lv = rv = NULL;
    for (int v = 0; v < e.g->ninputs; v++) tensor_free(inputs[v]), inputs[v] = NULL;
  }
done:
  if (inputs)
    for (int v = 0; v < e.g->ninputs; v++) tensor_free(inputs[v]);
  free(inputs);
  tensor_free(lv);
  tensor_free(rv);
  eg_free(eg);
  arena_free(e.a);
  return o;
}

#define MAX_INST 48

TEST(rules_random_float64) {
  const Rule *rules = rw_rules();
  RuleInstance *inst = malloc(sizeof(RuleInstance) * MAX_INST);
  for (int i = 0; i < rw_nrules(); i++) {
    const Rule *r = &rules[i];
    int n = rule_instances(r, true, 3, inst, 12);
    if (n == 0) fprintf(stderr, "  rule %s: no instance to test\n", r->info.name);
    CHECK(n > 0);
    for (int k = 0; k < n; k++) {
      Outcome o = run_instance(r, &inst[k], 2, 1000 + (uint64_t)k);
      char desc[512];
      rule_instance_str(r, &inst[k], desc, sizeof desc);
      bool rewritten = o.used || o.to_var;
      if (!o.built || !o.fired || o.mismatches || !rewritten)
        fprintf(stderr, "  rule %s at %s: built %d fired %d rewritten %d, %d of %d trials differ (worst %g)\n",
                r->info.name, desc, o.built, o.fired, rewritten, o.mismatches, o.trials, o.worst);
      CHECK(o.built);
      CHECK(o.fired);
      CHECK(o.mismatches == 0);
      /* the rewritten form is made of the rule's e-nodes (so the check is
         not the lhs against itself), unless the rhs is (or folds to) a variable */
      CHECK(rewritten);
    }
    /* matches that violate the condition must not fire */
    int nv = rule_instances(r, false, 3, inst, 6);
    for (int k = 0; k < nv; k++) {
      Outcome o = run_instance(r, &inst[k], 1, 77);
      if (o.fired) {
        char desc[512];
        rule_instance_str(r, &inst[k], desc, sizeof desc);
        fprintf(stderr, "  rule %s fired against its condition at %s\n", r->info.name, desc);
      }
      CHECK(o.built && !o.fired);
    }
  }
  free(inst);
}

static const RwRule planted[] = {
#define X(name, lhs, rhs, cond, doc) {#name, "planted", lhs, rhs, cond, false, doc},
#include "../rules/planted.def"
#undef X
};

TEST(rules_planted_unsound_are_caught) {
  Arena *a = arena_new();
  RuleInstance *inst = malloc(sizeof(RuleInstance) * MAX_INST);
  for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
    Rule r;
    char err[512];
    REQUIRE(rule_parse(a, &planted[i], &r, err, sizeof err));
    int n = rule_instances(&r, true, MAX_INST, inst, MAX_INST);
    int caught = 0;
    for (int k = 0; k < n; k++) {
      Outcome o = run_instance(&r, &inst[k], 3, 5000 + (uint64_t)k);
      caught += o.fired && o.mismatches > 0;
    }
    if (!caught) fprintf(stderr, "  planted rule %s was not caught (%d instances)\n", planted[i].name, n);
    CHECK(caught > 0);
  }
  free(inst);
  arena_free(a);
}

/* ---- the runner and extraction ---- */

TEST(runner_shape_guard) {
  /* a rule whose rhs has another shape never merges */
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Rule r;
  char err[512];
  RwRule bad = {"drop-sum", "t", "(sum@?ax ?x)", "?x", NULL, false, ""};
  REQUIRE(rule_parse(e.a, &bad, &r, err, sizeof err));
  Shape s = shape2(2, 3);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &s, P0);
  e.g->output = ir_reduce(e.g, OP_SUM, x, 1, P0);
  EGraph *eg = eg_from_graph(e.g);
  const Rule *list = &r;
  const EgReport *rep = eg_run_rules(eg, &list, 1, NULL);
  CHECK(rep->iters[0].matches[0] == 1);
  CHECK(rep->iters[0].applied[0] == 0);
  CHECK(rep->stop == EG_SATURATED);
  eg_free(eg);
  arena_free(e.a);
}

TEST(runner_limits) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(2, 2);
  Node *p = ir_input(e.g, "x0", ROLE_TENSOR, &s, P0);
  for (int i = 1; i < 8; i++) p = ir_binary(e.g, OP_MUL, p, ir_input(e.g, arena_printf(e.a, "x%d", i), ROLE_TENSOR, &s, P0), P0);
  e.g->output = p;
  EGraph *eg = eg_from_graph(e.g);
  const EgReport *rep = eg_run(eg, &(EgRunOpts){.max_nodes = 300});
  CHECK(rep->stop == EG_NODE_LIMIT);
  CHECK(eg->nnodes >= 300 && eg->nnodes < 300 + 50);
  eg_free(eg);
  eg = eg_from_graph(e.g);
  rep = eg_run(eg, &(EgRunOpts){.max_iters = 2});
  CHECK(rep->stop == EG_ITER_LIMIT);
  CHECK(rep->niters == 2);
  CHECK(rep->iters[1].enodes > rep->iters[0].enodes);
  eg_free(eg);
  arena_free(e.a);
}

TEST(extract_matmul_chain_and_provenance) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  SrcFile *f = src_from_string(e.a, "t.lean", "def f := a\n", 11);
  Pos p1 = {.file = f, .off = 0, .len = 3, .line = 1, .col = 1}, p2 = {.file = f, .off = 4, .len = 1, .line = 1, .col = 5};
  Shape sa = shape2(2, 64), sb = shape2(64, 64), sc = shape2(64, 1);
  Node *a = ir_input(e.g, "a", ROLE_TENSOR, &sa, P0), *b = ir_input(e.g, "b", ROLE_PARAM, &sb, P0);
  Node *c = ir_input(e.g, "c", ROLE_TENSOR, &sc, P0);
  Node *ab = ir_matmul(e.g, a, b, p1);
  e.g->output = ir_matmul(e.g, ab, c, p2);
  e.g->entry = "f";
  EGraph *eg = eg_from_graph(e.g);
  /* a first run with one rule enabled by name, then the defaults: the rules
     an e-node came from are named right across runs */
  bool *only = calloc((size_t)rw_nrules(), sizeof(bool));
  only[rw_rule_find("matmul-assoc")] = true;
  const EgReport *rep = eg_run(eg, &(EgRunOpts){.enable = only});
  CHECK(rep->nrules == 1 && !strcmp(rep->rule_names[0], "matmul-assoc") && rep->iters[0].applied[0] == 1);
  free(only);
  rep = eg_run(eg, NULL);
  CHECK(rep->stop == EG_SATURATED);
  const char *const *used;
  int nused;
  Graph *g2 = eg_extract(eg, eg_root(eg), NULL, NULL, &used, &nused);
  REQUIRE(graph_check(g2, stderr));
  /* a (b c) costs 2*64*64 + 2*2*64 flops, (a b) c 2*2*64*64 + 2*2*64 */
  const Node *out = g2->output;
  REQUIRE(out->op == OP_MATMUL);
  CHECK(out->in[0]->op == OP_INPUT && !strcmp(out->in[0]->name, "a"));
  CHECK(out->in[1]->op == OP_MATMUL);
  CHECK(nused == 1 && !strcmp(used[0], "matmul-assoc"));
  /* the same inputs in the same order; provenance from the matched root */
  REQUIRE(g2->ninputs == 3);
  CHECK(!strcmp(g2->inputs[1]->name, "b") && g2->inputs[1]->role == ROLE_PARAM);
  CHECK(!strcmp(g2->entry, "f"));
  CHECK(out->pos.col == 5 && out->in[1]->pos.col == 5);
  /* deterministic: a second run prints the same graph */
  EGraph *eg2 = eg_from_graph(e.g);
  eg_run(eg2, NULL);
  Graph *g3 = eg_extract(eg2, eg_root(eg2), NULL, NULL, NULL, NULL);
  char *t2 = graph_text(g2), *t3 = graph_text(g3);
  CHECK_STR(t2, t3);
  free(t2);
  free(t3);
  eg_free(eg2);
  eg_free(eg);
  arena_free(e.a);
}

/* A custom cost sees the children's summaries. */
static double cost_count_matmuls(const EgTerm *t, void **summary) {
  int *n = eg_alloc(t->eg, sizeof *n);
  *n = t->op == OP_MATMUL;
  for (int i = 0; i < t->nin; i++)
    if (t->kid_summary[i]) *n += *(const int *)t->kid_summary[i];
  *summary = n;
  double c = eg_default_cost(t, NULL);
  int *limit = t->user;
  return *n > *limit ? c + 1e12 : c;
}

TEST(extract_custom_cost_with_summaries) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(4, 4), r = shape2(4, 1);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &s, P0), *w = ir_input(e.g, "w", ROLE_PARAM, &s, P0);
  Node *sc = ir_input(e.g, "s", ROLE_TENSOR, &r, P0);
  e.g->output = ir_matmul(e.g, ir_binary(e.g, OP_MUL, x, sc, P0), w, P0);
  EGraph *eg = eg_from_graph(e.g);
  eg_run(eg, NULL);
  int limit = 1;
  Graph *g2 = eg_extract(eg, eg_root(eg), cost_count_matmuls, &limit, NULL, NULL);
  REQUIRE(g2->output != NULL);
  CHECK(graph_check(g2, stderr));
  eg_free(eg);
  arena_free(e.a);
}

static void mark_reachable(const Node *n, bool *seen) {
  if (seen[n->id]) return;
  seen[n->id] = true;
  for (int i = 0; i < n->nin; i++) mark_reachable(n->in[i], seen);
}

/* Softmax of (c·q) kᵀ: the greedy DAG choice prices amax's class alone and
   takes c·amax(q kᵀ) (cheaper than amax over the scaled scores by the
   scale of q), computing a second product beside the (c·q) kᵀ that exp
   reads; the whole-term refinement keeps one product. */
TEST(extract_dag_shares_a_product_between_readers) {
  Env e;
  env_init(&e);
  ENV_GUARD(e);
  Shape s = shape2(64, 16);
  Node *q = ir_input(e.g, "q", ROLE_TENSOR, &s, P0), *k = ir_input(e.g, "k", ROLE_TENSOR, &s, P0);
  int perm[2] = {1, 0};
  Node *sc = ir_matmul(e.g, ir_binary(e.g, OP_MUL, q, ir_const(e.g, 0.25, P0), P0), ir_permute(e.g, k, perm, 2, P0), P0);
  Node *m = ir_reduce(e.g, OP_AMAX, sc, 1, P0);
  Node *ex = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_SUB, sc, m, P0), P0);
  e.g->output = ir_binary(e.g, OP_DIV, ex, ir_reduce(e.g, OP_SUM, ex, 1, P0), P0);
  e.g->entry = "f";
  EGraph *eg = eg_from_graph(e.g);
  eg_run(eg, NULL);
  Graph *g2 = eg_extract_dag(eg, eg_root(eg), NULL, NULL, NULL, NULL);
  REQUIRE(graph_check(g2, stderr));
  bool *seen = calloc((size_t)g2->nnodes, sizeof(bool));
  mark_reachable(g2->output, seen);
  int products = 0;
  for (int i = 0; i < g2->nnodes; i++) products += seen[i] && g2->nodes[i]->op == OP_MATMUL;
  CHECK(products == 1);
  free(seen);
  eg_free(eg);
  arena_free(e.a);
}
