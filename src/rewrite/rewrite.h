/*
 * rewrite.h: equality saturation over the graph IR (the public API).
 *
 * A Graph goes in (eg_from_graph), rewrite rules grow the e-graph until it
 * saturates or a limit is hit (eg_run), and a Graph comes out (eg_extract),
 * chosen by a cost function the caller may supply.  The rules are one table
 * (rules.def); by default only the SAFE ones run, those that cannot worsen
 * numerics; UNSAFE ones run only when a caller enables them by name.
 *
 *   EGraph *eg = eg_from_graph(g);
 *   const EgReport *rep = eg_run(eg, NULL);          // defaults: SAFE rules, 30 iterations, 20000 e-nodes, 5 s
 *   Graph *best = eg_extract(eg, eg_root(eg), NULL, NULL, &used, &nused);   // default cost
 *   eg_free(eg);                                     // best lives in g->ctx's arena
 *
 * Determinism: nothing is ordered or hashed by pointer; classes and e-nodes
 * are visited in id order; given the same graph, options and rules, the
 * result is the same unless the wall-time limit stops the run.
 *
 * Ids: e-classes and e-nodes are small integers.  A class id may stop being
 * canonical when classes merge: eg_find gives the current one.  Every class
 * and e-node id stays valid until eg_free.
 */
#ifndef TS_REWRITE_H
#define TS_REWRITE_H

#include "../ir/ir.h"

typedef struct EGraph EGraph;

/* ---- the class analysis ---- */

/* A sign fact over the reals: exp, sigmoid, x*x, sums and maxima of such... */
typedef enum { SIGN_ANY, SIGN_NONNEG, SIGN_POS } EgSign;

typedef struct EgFacts {
  Shape shape;        /* every member has it (symbolic names kept where any member has one) */
  ElemKind kind;
  bool is_const;      /* every element equals value (scalar constants are folded into a CONST e-node) */
  double value;
  EgSign sign;
} EgFacts;

/* The sign of an op's value from its operands' facts, its constant (value),
   reduction axis and whether its two operands are one value: the class
   analysis's rule, stated once; node_sign applies it to a graph node (memo
   by node id, -1 for unknown). */
EgSign eg_sign_rule(Op op, double value, int axis, bool same_kids, int nin, const EgFacts *const *k);
EgSign node_sign(const Node *n, int8_t *memo);

/* ---- building and inspecting ---- */

/* The e-graph of g (every node, inputs in order); it owns its memory and
   remembers g (inputs, entry, context) for extraction.  g must outlive it. */
EGraph *eg_from_graph(const Graph *g);
void eg_free(EGraph *eg);
int eg_root(EGraph *eg);                       /* the class of g's output, canonical */
int eg_class_of(EGraph *eg, const Node *n);    /* the class of a node of g, canonical */
int eg_find(EGraph *eg, int cls);              /* the canonical id of a class */
const EgFacts *eg_facts(EGraph *eg, int cls);
int eg_num_nodes(const EGraph *eg);            /* e-nodes (live ones: duplicates merged away are not counted) */
int eg_num_classes(const EGraph *eg);          /* canonical classes */
/* Memory for a cost callback's summaries: lives until eg_free. */
void *eg_alloc(EGraph *eg, size_t n);

/* ---- the rules ---- */

typedef struct RwRule {
  const char *name, *family;
  const char *lhs, *rhs, *cond;   /* pattern text (pattern.c documents the syntax); cond may be NULL */
  bool unsafe;                    /* may worsen numerics: runs only when asked for by name */
  const char *doc;
} RwRule;

int rw_nrules(void);
const RwRule *rw_rule(int i);
int rw_rule_find(const char *name);            /* index, or -1 */

/* ---- running ---- */

typedef enum { EG_SATURATED, EG_ITER_LIMIT, EG_NODE_LIMIT, EG_TIME_LIMIT } EgStop;
const char *eg_stop_name(EgStop s);            /* "saturated", "iteration limit", ... */

typedef struct EgRunOpts {
  int max_iters;          /* 0: 30 */
  int max_nodes;          /* 0: 20000 e-nodes */
  double max_seconds;     /* 0: 5 (this thread's CPU time) */
  const bool *enable;     /* one flag per rule of the table (rw_nrules); NULL: the SAFE rules */
  bool no_backoff;        /* run every enabled rule every iteration (no BackoffScheduler bans) */
} EgRunOpts;

typedef struct EgIter {
  int iter;                /* 1-based */
  int enodes, eclasses;    /* after the iteration's rebuild */
  int *matches, *applied;  /* per rule (nrules entries): matches found, applications that changed the e-graph */
  double seconds;
} EgIter;

typedef struct EgReport {
  EgStop stop;
  int niters;
  EgIter *iters;
  int nrules;
  const char *const *rule_names;  /* nrules entries: the names the per-rule counts refer to */
  double seconds;
  int enodes, eclasses;           /* at the end */
} EgReport;

/* Saturate eg with the table's rules (o NULL: defaults).  The report lives
   in eg's memory. */
const EgReport *eg_run(EGraph *eg, const EgRunOpts *o);
/* The per-iteration table and the stop reason (rules that never matched are left out). */
void eg_report_print(FILE *f, const EgReport *r);
void eg_report_json(Json *j, const EgReport *r);

/* ---- extraction ---- */

/* What a cost function is shown: one e-node and its children's best terms. */
typedef struct EgTerm {
  EGraph *eg;
  int node;                 /* e-node id */
  Op op;
  const NodeAttrs *at;      /* attributes; at->shape and at->kind are the result's */
  int nin;
  const int *kids;          /* child classes (canonical) */
  const EgFacts *facts;     /* the node's class analysis */
  const double *kid_cost;   /* cost of each child's best term */
  void *const *kid_summary; /* the summary each child's best term was given (NULL if none) */
  void *user;
} EgTerm;

/* The cost of the term rooted at t->node: its own cost plus whatever it
   charges for its children (the default adds their costs: a tree cost).
   Must be >= 0 and >= each kid_cost (otherwise extraction may not settle).
   It may set *summary (memory from eg_alloc) to a per-term fact that the
   parents' calls see in kid_summary. */
typedef double (*EgCostFn)(const EgTerm *t, void **summary);

/* FLOPs: elementwise ops 1 per output element, reductions 1 per input
   element, matmul 2*M*N*K*batch, gather 1 per output element, layout ops
   1e-3 per output element, leaves 0; plus the children's costs. */
double eg_default_cost(const EgTerm *t, void **summary);

/* The best term of class root by cost (NULL: eg_default_cost), built as a
   new Graph through the ir_* builders in the source graph's context: the
   same inputs in the same order (names, roles, shapes), the same entry, the
   output the term; each node keeps the provenance of the e-node it came from
   (its graph node, or the matched root of the rule application that made it).
   *rules_used (if not NULL) gets the names of the rules whose e-nodes the
   term uses, each once, in the order the runs listed them (table order for
   eg_run); *nused their number.  Builder errors
   (e.g. the node limit) unwind through the context. */
Graph *eg_extract(EGraph *eg, int root, EgCostFn cost, void *user, const char *const **rules_used, int *nused);
/* eg_extract by DAG cost: a class shared by several parents is paid for
   once (a tree cost pays per use and may pick a term that computes a product
   twice).  cost must be additive (its own cost plus the kid_costs): it is
   called with every kid_cost zero to learn an e-node's own cost. */
Graph *eg_extract_dag(EGraph *eg, int root, EgCostFn cost, void *user, const char *const **rules_used, int *nused);

#endif
