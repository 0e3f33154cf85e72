/*
 * ir.h: the graph IR.
 *
 * A program is a DAG of primitive ops (ops.def) with concrete shapes.  Each
 * dimension keeps its symbolic name beside its size (`N=4096`, `H*D=2048`),
 * because the hyperparameter tools need to know which dimensions grow.  Nodes
 * are hash-consed: building an op whose kind, attributes and operands equal
 * an existing node's returns that node, so equal subterms are one node.  Each
 * op's shape rule is stated once (op_result, shape.c); the builders (graph.c)
 * report a mismatch as a user error at the operator, with both shapes.
 * Elements are real (float64 in the interpreter, a storage dtype on the GPU),
 * integer (Index, iota) or boolean (comparisons).
 */
#ifndef TS_IR_H
#define TS_IR_H

#include "../util/util.h"

#define TS_MAX_RANK 8

typedef enum {
#define X(e, name, arity, cls, attrs) OP_##e,
#include "ops.def"
#undef X
  OP_COUNT
} Op;

typedef enum {
  OPC_LEAF, OPC_UNARY, OPC_BINARY, OPC_COMPARE, OPC_SELECT, OPC_REDUCE,
  OPC_MATMUL, OPC_LAYOUT, OPC_CONCAT, OPC_GATHER,
} OpClass;

/* Which attribute fields of a Node an op uses. */
typedef enum {
  ATTR_NONE, ATTR_INPUT /* name, role */, ATTR_VALUE /* value */, ATTR_SIZE /* shape[0] */,
  ATTR_AXIS /* axis */, ATTR_PERM /* perm */, ATTR_SLICE /* lo, hi, axis */,
} OpAttrs;

typedef struct OpInfo { const char *name; int arity; OpClass cls; OpAttrs attrs; } OpInfo;
extern const OpInfo op_info[OP_COUNT];

/* A reduction's monoid (monoids.def): how partial results combine and what
   an empty part is. */
typedef struct Monoid { Op combine; double identity; } Monoid;
/* The monoid op folds with: a reduction's own, SUM's for a matrix product's
   contraction; NULL for any other op. */
const Monoid *op_monoid(Op op);
/* acc combined with v; nan_wins: a NaN operand makes the result NaN (NumPy's
   max and min), else a max or min ignores it (what a GPU's fmax does). */
double monoid_fold(const Monoid *m, double acc, double v, bool nan_wins);
/* A comparison op (OPC_COMPARE) applied to two numbers, and the op that is
   its negation over numbers that are not NaN (lt <-> ge, le <-> gt, eq <-> ne;
   OP_COUNT for any other op). */
bool op_compare(Op op, double x, double y);
Op op_compare_not(Op op);

typedef enum { EK_REAL, EK_INT, EK_BOOL } ElemKind;
typedef enum { ROLE_TENSOR, ROLE_PARAM, ROLE_INDEX } InputRole;

typedef struct Dim {
  int64_t n;           /* concrete size */
  const char *sym;     /* symbolic form ("N", "H*D") or NULL for a literal */
} Dim;

typedef struct Shape {
  int rank;
  Dim d[TS_MAX_RANK];
} Shape;

/* A size binding (--size NAME=VALUE, an entry's Nat arguments). */
typedef struct SizeArg { const char *name; int64_t value; bool used; } SizeArg;
/* A dimension's symbolic size ("N", "H*D", "D/H", "(B*N)") evaluated at the
   bindings: false when it names something unbound, divides by zero or does
   not parse (shape.c). */
bool dim_value_at(const Dim *d, const SizeArg *bind, int nbind, int64_t *out);
/* A reshape's dimensions that stay whole: to_of[d] (d a dimension of from)
   is the dimension of to it becomes, the dimensions larger than 1 paired
   in order while their sizes agree; -1 for a size-1 dimension and from
   the first that splits or merges on.  True when every dimension larger
   than 1 pairs (the reshape only adds or drops size-1 dimensions). */
bool shape_reshape_map(const Shape *from, const Shape *to, int *to_of);


typedef struct Node Node;
struct Node {
  Op op;
  int id;              /* index in Graph.nodes: operands always have smaller ids */
  ElemKind kind;
  Shape shape;
  int nin;
  Node **in;
  /* attributes (which ones apply depends on op) */
  double value;        /* CONST */
  int axis;            /* REDUCE, SLICE, CONCAT, GATHER (non-negative) */
  int perm[TS_MAX_RANK]; /* PERMUTE */
  int64_t lo, hi;      /* SLICE */
  const char *name;    /* INPUT: the parameter name */
  InputRole role;      /* INPUT */
  int input_index;     /* INPUT: position among the entry's tensor parameters */
  /* provenance */
  Pos pos;             /* where the op is written (may be in the prelude) */
  Pos site;            /* the outermost call site in the user's file */
  const char *via;     /* name of the prelude/user definition pos lies in, or NULL */
  /* hash-consing */
  uint64_t hash;
  Node *hnext;
};

typedef struct Graph {
  Ctx *ctx;
  Node **nodes; int nnodes, cap;
  Node **buckets; int nbuckets;
  Node **inputs; int ninputs, inputs_cap;
  Node *output;
  const char *entry;   /* name of the entry definition */
  Pos entry_pos;
  /* provenance applied to nodes built next (set by the elaborator) */
  Pos cur_site;
  const char *cur_via;
} Graph;

Graph *graph_new(Ctx *c);

/* The attributes of an op application as op_result reads them; which apply
   depends on the op (OpInfo.attrs).  axis may be negative (from the end);
   perm has nperm entries; shape is the requested shape of INPUT, IOTA (rank
   1: the length) and RESHAPE; kind is the element kind of INPUT and CONST. */
typedef struct NodeAttrs {
  double value;
  int axis;
  int perm[TS_MAX_RANK], nperm;
  int64_t lo, hi;
  Shape shape;
  ElemKind kind;
} NodeAttrs;

/* Shapes and the op rules (shape.c) */
/* The shape and element kind op gives operands of these shapes and kinds
   with these attributes (in and kin have nin entries).  False with a
   one-line reason in why (the user-facing message, no position: callers
   report it).  The one statement of every op's rule: the builders, the
   invariant checker and the e-graph all use it. */
bool op_result(Op op, const NodeAttrs *at, const Shape *const *in, const ElemKind *kin, int nin, Shape *out,
               ElemKind *kout, char *why, size_t whylen);
NodeAttrs node_attrs(const Node *n);        /* the attributes of a built node */
int axis_norm(int axis, int rank);          /* axis in 0..rank-1, or -1 if out of range */
const char *elem_kind_name(ElemKind k);     /* "real", "integer", "boolean" */
int64_t shape_numel(const Shape *s);        /* product; errors are checked at build */
bool shape_equal(const Shape *a, const Shape *b); /* sizes only */
/* Write "[B=4, N=4096, 128]" into buf; returns buf. */
char *shape_str(const Shape *s, char *buf, size_t n);
/* Broadcast a and b per NumPy; false if incompatible (then *bad_dim gets the
   right-aligned dimension index from the end that disagrees, 0-based). */
bool shape_broadcast(const Shape *a, const Shape *b, Shape *out, int *bad_dim);

/* Builders.  All take the position of the operator for error messages and
   provenance; all hash-cons; all check shapes and element kinds and report
   violations through graph->ctx (unwinding). */
Node *ir_input(Graph *g, const char *name, InputRole role, const Shape *s, Pos p);
Node *ir_const(Graph *g, double v, Pos p);
Node *ir_const_int(Graph *g, int64_t v, Pos p);   /* an integer scalar (kind EK_INT) */
Node *ir_iota(Graph *g, int64_t n, const char *sym, Pos p);
Node *ir_unary(Graph *g, Op op, Node *a, Pos p);
Node *ir_binary(Graph *g, Op op, Node *a, Node *b, Pos p);   /* also compares */
Node *ir_select(Graph *g, Node *c, Node *a, Node *b, Pos p);
Node *ir_reduce(Graph *g, Op op, Node *a, int axis, Pos p);  /* axis may be negative */
Node *ir_matmul(Graph *g, Node *a, Node *b, Pos p);
Node *ir_permute(Graph *g, Node *a, const int *perm, int n, Pos p);
Node *ir_transpose(Graph *g, Node *a, Pos p);                /* swap last two */
Node *ir_reshape(Graph *g, Node *a, const Shape *s, Pos p);
Node *ir_slice(Graph *g, Node *a, int axis, int64_t lo, int64_t hi, Pos p);
Node *ir_concat(Graph *g, Node **xs, int n, int axis, Pos p);
Node *ir_gather(Graph *g, Node *x, Node *idx, int axis, Pos p);

/* Hashes of a node without its operands (graph.c; hash-consing adds the
   operands' ids): its op, kind and shape; its attributes mixed into h,
   with value, lo and hi given (the node's own, or normalized by a caller
   that keys nodes alike in all but those). */
uint64_t ir_head_hash(const Node *n);
uint64_t ir_attrs_mix(uint64_t h, const Node *n, double value, int64_t lo, int64_t hi);

/* Check every invariant (topological order, shapes agree with each op's
   rule, hash table consistent); prints the first violation and returns false. */
bool graph_check(const Graph *g, FILE *err);

/* Printers (print.c) */
void graph_print_text(FILE *out, const Graph *g);
void graph_print_dot(FILE *out, const Graph *g);
void graph_print_json(FILE *out, const Graph *g);

/* How random inputs are drawn (inputs.c).  ir_index_bound: an Index input is
   uniform over [0, bound), bound the smallest axis size it is gathered along
   or the length of an iota it is compared with (2 if neither).  ir_fan_in: a Param that reaches a matmul operand
   through layout ops is normal(0, 1/fan_in), fan_in the contraction size
   of the first such matmul (the forward's, where a backward pass follows);
   0 for every other input (normal(0, 1)). */
int64_t ir_index_bound(const Graph *g, const Node *input);
int64_t ir_fan_in(const Graph *g, const Node *input);

#endif
