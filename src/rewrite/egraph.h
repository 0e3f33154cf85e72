/*
 * egraph.h: the inside of src/rewrite, shared by its files and by the rule
 * checks (tests/unit/test_rewrite.c, tests/rules/prove_rules.c).
 *
 * An e-node is an op, its attributes (NodeAttrs, with at.shape/at.kind the
 * result's) and child class ids.  E-nodes live in one array (ids), classes in
 * another (ids; union-find over them).  The memo hash-conses e-nodes by op,
 * attributes and canonical children.  After unions, eg_rebuild restores
 * congruence (deferred, in egg's manner: once per runner iteration), rebuilds
 * each class's list of e-nodes and runs the class analysis to its fixpoint.
 *
 * A rule is parsed from its text once (pattern.c): lhs and rhs are trees of
 * Pat, with three kinds of variables: class variables (?x), attribute
 * variables (the ?ax of sum@?ax) and op variables (%u, %b).  A match of the
 * lhs is a Subst; conditions and the shape check of the rhs see a match
 * through a MatchView (facts of the class variables, attributes, ops), so
 * the same code serves the e-graph and the rule checks' concrete instances.
 */
#ifndef TS_EGRAPH_H
#define TS_EGRAPH_H

#include "rewrite.h"

/* ---- e-graph ---- */

typedef struct ENode {
  Op op;
  NodeAttrs at;          /* attributes; at.shape and at.kind are the result's */
  int nin;
  int *kids;             /* child classes (canonical as of the last rebuild or the add) */
  int cls;               /* the class it was added to (eg_find gives the current one) */
  int rule;              /* the rule whose application made it (EGraph.rule_names), or -1 */
  bool dead;             /* a duplicate of another e-node, merged away by rebuild */
  uint64_t hash;
  /* provenance, as in Node */
  Pos pos, site;
  const char *via;
  /* INPUT */
  const char *name;
  InputRole role;
  int input_index;
} ENode;

typedef struct EClass {
  EgFacts f;
  int *nodes;            /* live e-nodes, in id order (valid after a rebuild) */
  int nnodes, cap;
} EClass;

struct EGraph {
  Arena *arena;
  Ctx *ctx;              /* the source graph's: extraction builds there */
  const Graph *src;
  ENode *nodes;
  int nnodes, nodes_cap, nlive;
  int *uf;               /* union-find parent per class */
  EClass *classes;
  int nclasses, classes_cap, nroots;
  int *memo;             /* open addressing: e-node ids, -1 empty */
  int memo_cap, memo_used;
  int root;              /* the class of the source graph's output */
  int *node_class;       /* per node id of the source graph: its class when added */
  bool dirty;            /* unions since the last rebuild */
  /* provenance and rule given to e-nodes added now */
  Pos cur_pos, cur_site;
  const char *cur_via;
  int cur_rule;
  /* every rule any run on this e-graph used, in first-use order; ENode.rule
     indexes it (so runs with different rule lists do not mix names up) */
  VEC(const char *) rule_names;
};

EGraph *eg_new(Ctx *c, const Graph *src);
/* Add an e-node (op, attributes, child classes); at->shape is read for INPUT,
   IOTA and RESHAPE only.  Returns its class, or -1 if op_result rejects it.
   An identity permute, a reshape to the same shape, a full slice or a
   one-operand concat is its operand's class. */
int eg_add(EGraph *eg, Op op, const NodeAttrs *at, const int *kids, int nin);
int eg_add_input(EGraph *eg, const Node *input);
/* Merge two classes; false if they were one already.  Congruence waits for eg_rebuild. */
bool eg_union(EGraph *eg, int a, int b);
void eg_rebuild(EGraph *eg);
/* Do the two attribute sets agree on what op uses? */
bool attrs_equal(Op op, const NodeAttrs *a, const NodeAttrs *b);
/* Is v a constant the folder may produce (finite, not -0.0)? */
bool eg_safe_const(double v);

/* ---- patterns and rules ---- */

#define PAT_MAXV 8   /* class variables per rule */
#define PAT_MAXA 3   /* attribute variables */
#define PAT_MAXO 2   /* op variables */

typedef enum { PAT_VAR, PAT_NUM, PAT_OP } PatKind;
/* Pseudo-ops: T, the transpose (a permute swapping the last two axes, in
   lhs and rhs); IOTA_ALONG (rhs only): the index along axis ax of the
   child's shape, iota reshaped to size 1 on every other axis; COLUMN (rhs
   only): a row vector (every axis but the last of size 1) reshaped to a
   column [n, 1], so that it scales the rows of a matrix it multiplies. */
typedef enum { PSEUDO_NONE, PSEUDO_T, PSEUDO_IOTA_ALONG, PSEUDO_COLUMN } Pseudo;
/* An attribute spec after '@': none, a variable, a literal axis, or (rhs
   only) the composition of two permutation variables. */
typedef enum { PA_NONE, PA_VAR, PA_LIT, PA_COMPOSE } PatAttrKind;

typedef struct Pat Pat;
struct Pat {
  PatKind kind;
  int var;               /* PAT_VAR: class variable slot */
  double num;            /* PAT_NUM */
  Op op;                 /* PAT_OP, when opvar < 0 and pseudo is NONE */
  int opvar;             /* op variable slot, or -1 */
  Pseudo pseudo;
  PatAttrKind ak;
  int aslot, aslot2;     /* PA_VAR: slot; PA_COMPOSE: inner (aslot) then outer (aslot2) */
  int alit;              /* PA_LIT */
  int nkids;
  Pat **kids;
};

typedef enum { CA_CLASS, CA_ATTR, CA_INT } CondArgKind;
typedef struct CondArg { CondArgKind kind; int slot, lit; } CondArg;

/* What a condition (and the rhs shape check) sees of a match. */
typedef struct MatchView {
  const EgFacts *v[PAT_MAXV];
  const NodeAttrs *a[PAT_MAXA];
  Op o[PAT_MAXO];
} MatchView;

typedef bool (*CondFn)(const CondArg *args, const MatchView *m);
typedef struct CondDef { const char *name; int nargs; CondFn fn; const char *doc; } CondDef;
typedef struct Cond { const CondDef *def; CondArg args[3]; } Cond;

typedef struct Rule {
  RwRule info;
  Pat *lhs, *rhs;
  Cond conds[4];
  int nconds;
  int nvars, nattrs, nops;
  const char *var_name[PAT_MAXV], *attr_name[PAT_MAXA], *op_name[PAT_MAXO];
  OpClass op_class[PAT_MAXO];   /* the ops an op variable ranges over */
  Op attr_op[PAT_MAXA];         /* an op that binds each attribute variable (its kind of attribute) */
} Rule;

/* Parse a rule (info's texts); false with a message in err.  Memory from a. */
bool rule_parse(Arena *a, const RwRule *info, Rule *out, char *err, size_t errlen);
/* The table, parsed on first use (aborts on a malformed row: a bug). */
const Rule *rw_rules(void);
const CondDef *cond_lookup(const char *name);
bool rule_conds_hold(const Rule *r, const MatchView *m);

/* A match: the class it matched, class variables, the e-nodes whose
   attributes bound the attribute variables, op variables. */
typedef struct Subst {
  int root, rnode;       /* the class matched and the e-node at the top of the lhs */
  int cls[PAT_MAXV];
  int anode[PAT_MAXA];
  Op op[PAT_MAXO];
} Subst;

/* Every match of r's lhs in class cls (canonical), appended to *out. */
typedef VEC(Subst) SubstVec;
void pat_match(EGraph *eg, const Rule *r, int cls, Arena *scratch, SubstVec *out);
void subst_view(EGraph *eg, const Rule *r, const Subst *s, MatchView *m);

/* Bindings by value, for building a pattern. */
typedef struct Binding {
  int cls[PAT_MAXV];
  NodeAttrs a[PAT_MAXA];
  Op o[PAT_MAXO];
} Binding;

/* The facts (shape and kind; const for literals) of p under m; false if some
   node of p is rejected by op_result. */
bool pat_shape(const Pat *p, const MatchView *m, EgFacts *out);
/* The same, failing also where a reshape is the identity (which eg_add would
   fold away, so that the term would not be the pattern). */
bool pat_shape_ex(const Pat *p, const MatchView *m, bool no_identity, EgFacts *out);
/* Add p to the e-graph under b (whose class variables are classes of eg);
   returns its class (-1 if rejected: call pat_shape first to add nothing then). */
int pat_add(EGraph *eg, const Pat *p, const Binding *b);
/* The attributes a rhs node gets: its spec resolved under the bindings, for
   a node of op with kids of these shapes. */
bool pat_attrs(const Pat *p, const NodeAttrs *const *a, const Shape *const *kid_shapes, NodeAttrs *out);

/* ---- concrete instances of a rule, for the rule checks (instances.c) ---- */

typedef struct RuleInstance {
  EgFacts leaf[PAT_MAXV];   /* per class variable: shape, kind, sign (SIGN_POS: must be > 0) */
  int64_t bound[PAT_MAXV];  /* integer leaves (gather indices): values in [0, bound) */
  NodeAttrs a[PAT_MAXA];
  Op o[PAT_MAXO];
  EgFacts lhs;              /* the lhs's shape and kind */
  bool holds;               /* the conditions hold (else they fail) */
} RuleInstance;

/* Up to max varied instances of r at small shapes (at most per_op for each
   choice of its op variables): lhs and rhs well-formed with equal shapes and
   kinds, the conditions holding (holding) or failing (!holding).  Returns
   how many. */
int rule_instances(const Rule *r, bool holding, int per_op, RuleInstance *out, int max);
/* "?a[2, 3] ?r[2, 1] @ax=1 %u=exp" */
void rule_instance_str(const Rule *r, const RuleInstance *in, char *buf, size_t n);

/* ---- running a list of rules (the table's are eg_run) ---- */
const EgReport *eg_run_rules(EGraph *eg, const Rule *const *rules, int nrules, const EgRunOpts *o);

#endif
