/*
 * tile.h: the tile-program IR, a kernel-level view of a graph.
 *
 * A TileProgram is a list of kernels over global tensors.  Each kernel has
 * a grid of up to three axes, a thread count, on-chip tile buffers (shared
 * memory or registers, "fragments"), and a statement tree.  Statements are
 * tile statements, as TileLang writes them: fill a tile, map an expression
 * over a tile (a T.Parallel loop; the expression may read global tensors at
 * computed indices), accumulate a tile matrix product (T.gemm, operands
 * optionally transposed), reduce a tile along its last axis (T.reduce_*),
 * store a tile into a global tensor (plain or atomic add); and two control
 * statements: a loop over tiles of an axis (`for k in [lo, hi)`, software
 * pipelined with `stages`, bounds computed from the block ids and outer loop
 * variables, so a causal kernel's key loop stops at the diagonal) and a
 * block-uniform `if` (a condition on block ids and loop variables only:
 * every thread of a block takes the same branch).  Loops nest; the loop
 * variable of nesting depth d is k, k1, k2.
 *
 * Expressions (SExpr) are scalar: integer index arithmetic over the block
 * ids (bx, by, bz), the tile coordinates (i, j) of the enclosing map or
 * store, and the loop variables; and real/boolean/integer value arithmetic
 * with the graph's elementwise ops.  A load of a global tensor takes one
 * index expression per dimension; a read of a tile buffer takes one per
 * tile axis.  The emitters print these as Python; the tile interpreter
 * evaluates them.  Every pass over statements goes through tile_walk and
 * stmt_exprs (tprint.c), the one walk over the tree.
 */
#ifndef TS_TILE_H
#define TS_TILE_H

#include "../interp/interp.h"
#include "../ir/ir.h"

/* Storage types of global tensors and tile buffers. */
typedef enum { DT_F32, DT_F16, DT_BF16, DT_I32, DT_I64, DT_BOOL } DType;
const char *dtype_name(DType t);          /* "float32", "bfloat16", ... (TileLang spelling) */
int dtype_bytes(DType t);                 /* bytes per element */
bool dtype_parse(const char *s, DType *t); /* "bf16" "f16" "f32" and long names */
/* Round a value to what the type can hold (bf16/f16/f32 rounding, integers). */
double dtype_round(DType t, double v);

typedef enum { SCOPE_GLOBAL, SCOPE_SHARED, SCOPE_FRAGMENT } Scope;
/* A scratch global holds split partials or atomic accumulators: it is not
   a graph node's value, starts at `init` (run() fills it) and lives in its
   own dtype (float32 for partial states).  An init of NaN means no value:
   every element is written before it is read (split partials), so run()
   allocates it unfilled, as it does temporaries, and the tile interpreter
   poisons it with NaN, so a partial never written shows in the result. */
typedef enum { GB_INPUT, GB_TEMP, GB_OUTPUT, GB_SCRATCH } GlobalRole;

typedef struct TBuf {
  int id;
  const char *name;
  Scope scope;
  DType dtype;
  /* global tensors: the graph node they hold and its shape; tile buffers:
     the node whose values they hold, if one does (a gemm operand tile, a
     reduce's input tile), else NULL -- verify's error bound charges that
     node the rounding of the tile's dtype */
  const Node *node;
  GlobalRole role;
  double init;          /* GB_SCRATCH: the value every element starts with */
  Shape shape;          /* for tiles: the tile extents (rank 1 or 2) */
} TBuf;

/* Index variables an expression may use: block ids, tile coordinates, and
   the loop variable of each loop nesting depth (k, k1, k2). */
typedef enum { TV_BX, TV_BY, TV_BZ, TV_I, TV_J, TV_K, TV_K1, TV_K2 } TVar;
#define TV_COUNT 8
#define TILE_MAX_LOOP_DEPTH 3
/* The loop variable of nesting depth d (0-based). */
static inline TVar tv_loop(int d) { return (TVar)(TV_K + d); }

typedef enum {
  SX_INT,    /* an integer constant: i */
  SX_REAL,   /* a real constant: f */
  SX_VAR,    /* var */
  SX_IDX,    /* integer arithmetic: iop over a[0], a[1] */
  SX_LOAD,   /* buf (global) at idx[0..nidx) */
  SX_TILE,   /* buf (shared/fragment) at idx[0..nidx) */
  SX_OP,     /* a graph elementwise op (unary, binary, compare, select, cast) over a[0..n) */
} SExprKind;

/* integer ops; DIV and MOD are floor division of non-negative operands */
typedef enum { IX_ADD, IX_SUB, IX_MUL, IX_DIV, IX_MOD, IX_MIN, IX_MAX, IX_LT, IX_AND } IdxOp;

typedef struct SExpr SExpr;
struct SExpr {
  SExprKind kind;
  ElemKind ek;        /* the kind of value it yields */
  int64_t i;          /* SX_INT */
  double f;           /* SX_REAL */
  TVar var;           /* SX_VAR */
  IdxOp iop;          /* SX_IDX */
  Op op;              /* SX_OP */
  TBuf *buf;          /* SX_LOAD, SX_TILE */
  SExpr **idx;
  int nidx;
  SExpr *a[3];
  int n;
};

typedef enum {
  ST_FILL,     /* dst := value (a constant) everywhere */
  ST_MAP,      /* for (i, j) in dst: dst[i, j] := mask ? value : other */
  ST_GEMM,     /* dst += op(a) ⬝ op(b), op = transpose where trans_a/trans_b (dst [M, N]) */
  ST_REDUCE,   /* dst[i] := reduce_op over j of a[i, j] (clear) or combined with dst[i] */
  ST_STORE,    /* for (i, j) in the tile extents: if mask: global[gidx] := value */
  ST_ATOMIC_ADD, /* like STORE but adds */
  ST_LOOP,     /* for var in [lo, hi): body (software-pipelined with `stages`; 0 = serial) */
  ST_IF,       /* if cond: body else: orelse (cond is block-uniform) */
} StmtKind;

typedef struct Stmt Stmt;
typedef VEC(Stmt *) StmtList;

struct Stmt {
  StmtKind kind;
  TBuf *dst;          /* FILL, MAP, GEMM, REDUCE */
  TBuf *a, *b;        /* GEMM operands, REDUCE source */
  bool trans_a, trans_b; /* GEMM: a is stored [K, M] / b is stored [N, K] */
  SExpr *value;       /* FILL, MAP, STORE */
  SExpr *mask;        /* MAP, STORE: NULL means always */
  SExpr *other;       /* MAP: the value where mask is false */
  Op reduce_op;       /* REDUCE: OP_SUM, OP_AMAX or OP_AMIN */
  bool clear;         /* REDUCE */
  bool deferred;      /* REDUCE: moved past its loop (defer.c; lower_plan.c's lanes), its tile accumulated there */
  const Node *of;     /* REDUCE: the graph reduction it computes, where the plan lowering knows it (explain) */
  bool nan_ok;        /* REDUCE amax/amin: may drop NaNs (as fmax does): every output
                         reading it also reads a sum of exp(y - it) over the same y,
                         NaN wherever a NaN was dropped (plan lowering proves it) */
  TBuf *global;       /* STORE, ATOMIC_ADD */
  SExpr **gidx;       /* STORE: one index per global dimension */
  int ngidx;
  int64_t ext[2];     /* STORE: the tile extents iterated (i, j); ext[1] = 1 for rank 1 */
  TVar var;           /* LOOP: its variable (tv_loop(depth)) */
  SExpr *lo, *hi;     /* LOOP: bounds, over block ids and outer loop variables */
  int stages;         /* LOOP */
  SExpr *cond;        /* IF */
  bool specialize;    /* IF: body computes what orelse computes, where cond holds (a target may emit orelse alone) */
  StmtList body;      /* LOOP: the body; IF: the branch taken when cond holds */
  StmtList orelse;    /* IF: the other branch */
};

typedef VEC(TBuf *) BufList;

typedef enum { KERNEL_MAP, KERNEL_REDUCE, KERNEL_MATMUL, KERNEL_FUSED, KERNEL_COMBINE } KernelKind;

typedef struct Kernel {
  const char *name;
  KernelKind kind;      /* what the lowering made it for (documentation) */
  int64_t grid[3];      /* blocks along x, y, z (1 where unused) */
  int threads;
  /* tile loads as bulk copies where the target has them (TileLang T.copy:
     TMA) rather than element-wise loads (cp.async), a schedule choice: 1
     on, 2 off, 0 the target's default */
  int copy;
  /* a product's final tile stored through shared memory and one bulk copy
     (TileLang: a TMA store) rather than by each thread, a schedule choice:
     1 on, 2 off, 0 the target's default */
  int store;
  BufList bufs;         /* tile buffers */
  StmtList body;        /* the statement tree */
  const Node *node;     /* the graph node it materializes (the main one, for fused kernels) */
  VEC(const Node *) covers; /* the graph nodes it computes (for source comments) */
  int *cover_ids, cover_cap;    /* their ids as an open-addressed set (tile_cover) */
} Kernel;

typedef struct TileProgram {
  Graph *g;
  DType dtype;          /* storage type of real tensors */
  BufList globals;      /* inputs (in the entry's order), temporaries, the output */
  VEC(Kernel *) kernels;
  TBuf **of_node;       /* per graph node id: its global buffer, or NULL */
  TBuf *output;
  uint64_t *name_hash;  /* the globals' names hashed (open addressing, 0 empty): unique_name's fast path */
  int name_cap;
} TileProgram;

/* The most float32 elements a thread may hold in a tile that lives across
   a loop's trips so that a reduction can wait until after the loop (the
   deferred reductions of defer.c, the lane-wise Welford states of
   lower_plan.c): beyond it the registers spill. */
enum { TILE_DEFER_REGS = 32 };

/* The naive lowering (lower.c): one kernel per chain of elementwise and
   layout ops, per reduction and per matrix product.  A node gets a global
   buffer (and its own kernel) when it is a reduction, a matrix product, the
   output, or has more than one user; other nodes are inlined into their
   users' expressions. */
TileProgram *tile_lower(Graph *g, DType dtype);

/* The naive lowering's parts, for plans whose kernels are naive
   (src/search/lower_plan.c): a program with its input globals; a global
   tensor for node n (named after `name`, made unique); the output's
   global; the naive kernel of node n; which nodes the naive lowering
   materializes (uses: tile_use_counts). */
TileProgram *tile_program_new(Graph *g, DType dtype);
TBuf *tile_global_buf(TileProgram *tp, const Node *n, const char *name, GlobalRole role);
/* The type node n is stored in as a global of this role (storage: the
   program's type of real tensors; a row statistic's temp is float32). */
DType tile_storage_of(DType storage, const Node *n, GlobalRole role);
/* A scratch global (no graph node) of this shape and type, starting at init. */
TBuf *tile_scratch_buf(TileProgram *tp, const char *name, const Shape *shape, DType dt, double init);
void tile_program_output(TileProgram *tp);
void tile_lower_node(TileProgram *tp, const Node *n);
int *tile_use_counts(const Graph *g);
bool tile_materialized(const Graph *g, const int *uses, const Node *n);

/* Check every invariant of a tile program; prints the first violation and
   returns false. */
bool tile_check(const TileProgram *tp, FILE *err);

/* The tile interpreter (tinterp.c).  Runs every kernel over every block of
   its grid, sequentially, with the semantics the emitters give the IR:
   values stored in a global or a tile buffer are rounded to its dtype,
   expressions are evaluated in float32 (integers exactly), a gemm or a
   reduce accumulates in double and rounds to the destination once per
   statement.  Temporaries and the output start as NaN (poison), tile
   buffers start as NaN in every block.  An out-of-bounds load or store, an
   out-of-range tile access, a division by zero in index arithmetic or more
   than 4e9 element operations is a fault: the run stops and names the
   kernel and the statement. */
typedef struct TileFault {
  bool hit;
  const Kernel *kernel;     /* NULL for a fault outside any kernel (too large) */
  const Stmt *stmt;
  char msg[256];            /* what went wrong, with the offending index */
} TileFault;

/* inputs[i] is the value of tp->g->inputs[i] (rounded into its storage type
   on the way in).  Returns the output (caller frees), or NULL with *fault
   filled.  globals (NULL, or one slot per tp->globals entry) receives every
   global tensor's final value (caller frees each), also after a fault. */
Tensor *tile_run(const TileProgram *tp, Tensor **inputs, Tensor **globals, TileFault *fault);
/* Where a statement is in its kernel (in buf): "k3_exp post[0]" --
   statements before the kernel's first top-level loop are pre[i], after
   its last one post[i], inside a loop loop[i] (nested: loop[2].loop[0]),
   inside an if's branches then[i] / else[i]. */
const char *tile_stmt_where(const Kernel *k, const Stmt *s, char *buf, size_t n);

/* The one walk over statements (tprint.c).  tile_walk calls fn on every
   statement of l and of the lists nested in it, in program order, a
   statement before its body; depth is the loop nesting depth of the
   statement's list.  It stops, returning false, when fn returns false. */
typedef bool (*StmtVisit)(const Stmt *s, int depth, void *ud);
bool tile_walk(const StmtList *l, StmtVisit fn, void *ud);
/* fn on every expression a statement holds itself (value, mask, other,
   store indices, loop bounds, condition), not those of nested statements. */
typedef void (*ExprVisit)(const SExpr *e, void *ud);
void stmt_exprs(const Stmt *s, ExprVisit fn, void *ud);
/* fn on e and every subexpression of it (indices and operands), pre-order. */
void sexpr_walk(const SExpr *e, ExprVisit fn, void *ud);
/* Does e or any subexpression of it use the variable? */
bool sexpr_uses_var(const SExpr *e, TVar v);
/* Does any expression of s (not nested statements) use the variable? */
bool stmt_uses_var(const Stmt *s, TVar v);
/* Does the kernel have a statement of this kind anywhere? */
bool kernel_has(const Kernel *k, StmtKind kind);
bool tile_list_has(const StmtList *l, StmtKind kind); /* ... in l, at any depth */
/* The reads and writes of tile buffer b by the statements of l, at any
   depth: reads by expressions (tile reads), gemm operands and reduce
   sources; writes by fill, map, gemm and reduce destinations. */
void tile_buf_uses(const StmtList *l, const TBuf *b, int *reads, int *writes);
/* Does map or store s have a mask that is not the constant true? */
bool stmt_masked(const Stmt *s);
/* Is s a map that only copies a global tensor of the tile's dtype into a
   shared tile, unmasked (what a bulk copy or cp.async can do), and not a
   tile the threads compute? */
bool tile_map_is_copy(const Stmt *s);
/* Does list l fill a shared tile from the threads (a map into shared
   memory that is not a copy by is_copy, tile_map_is_copy if NULL), at any
   depth? */
bool tile_thread_fills(const StmtList *l, bool (*is_copy)(const Stmt *s));
/* The bytes of the shared tiles list l writes (at any depth) by copies and
   by the threads, as is_copy tells them apart (tile_map_is_copy if NULL). */
void tile_shared_writes(const StmtList *l, bool (*is_copy)(const Stmt *s), double *copy_bytes, double *fill_bytes);

/* A node's value at an index as an expression (pointwise.c): elementwise
   ops inlined, layout ops and gathers turned into index arithmetic, loads
   of the program's global tensors (tp->of_node) where the walk reaches
   one.  hook (may be NULL) is asked first at every node reached and may
   return an expression that stands for it (a tile read, a substitute);
   top: expand n itself even if it has a global tensor.  Expanded nodes are
   recorded in k->covers (k may be NULL). */
typedef struct Pw Pw;
struct Pw {
  Arena *a;
  TileProgram *tp;
  Kernel *k;
  SExpr *(*hook)(Pw *p, const Node *n, SExpr **idx, bool top);
  void *ud;             /* the hook's own state */
  const bool *computed; /* NULL, or per node id: computed here, never loaded (even if stored) */
  const Node *failed;   /* set to a reduction or product the walk reached with no value for it */
};
SExpr *tile_pointwise(Pw *p, const Node *n, SExpr **idx, bool top);
/* x clamped into [0, n). */
SExpr *tile_clamp_index(Arena *a, SExpr *x, int64_t n);
/* Split a flat row-major position over dims s->d[0..r) into r indices. */
void tile_unflatten(Arena *a, SExpr *flat, const Shape *s, int r, SExpr **out);
/* idx into a tensor of shape from, as the index into its reshape to (row-major: the same flat offset). */
void tile_reshape_index(Arena *a, SExpr *const *idx, const Shape *from, const Shape *to, SExpr **out);
/* The index into an operand of shape op from the index idx of a result of
   shape out it broadcasts to (trailing dimensions aligned). */
void tile_broadcast_index(const Shape *op, const Shape *out, SExpr **idx, SExpr **res, Arena *a);
/* Record n in k->covers once (k may be NULL). */
void tile_cover(Arena *a, Kernel *k, const Node *n);

/* Print a tile program (tprint.c), as `tilesmith tiles` shows it. */
void tile_print(FILE *out, const TileProgram *tp);
/* The same as one JSON object (`tiles --format json`): entry, dtype,
   global_buffers, kernels (name, grid, threads, node, buffers, body: the
   statements as printed, one line each). */
void tile_print_json(FILE *out, const TileProgram *tp);
const char *tile_role_name(GlobalRole r);   /* input, output, temp, scratch */
void tile_json_globals(Json *j, const TileProgram *tp);
/* The spelling of an integer op: + - * // % min max < and. */
const char *ix_spelling(IdxOp op);
/* The spelling of an index variable: bx, by, bz, i, j, k, k1, k2. */
const char *tvar_name(TVar v);
/* Print an expression (for printers, diagnostics and the emitters). */
void sexpr_print(FILE *out, const SExpr *e);

/* Floor division (the semantics of IX_DIV and IX_MOD for any signs). */
int64_t ix_floordiv(int64_t a, int64_t b);
/* Evaluate an integer index expression (no loads or tile reads) with the
   index variables set to vars[TV_COUNT]; false if it is not one or divides
   by zero. */
bool sexpr_eval_index(const SExpr *e, const int64_t *vars, int64_t *out);
/* The largest trip count of a loop over the kernel's blocks (every block
   when the grid has at most 128 of them, else the corners and 128 blocks
   evenly spaced; outer loop variables at 0): for work estimates and
   pipeline depths; exact for constant bounds. */
int64_t tile_loop_trips_max(const Kernel *k, const Stmt *loop);
/* ... and the mean trip count over the same blocks (but the corners). */
double tile_loop_trips_mean(const Kernel *k, const Stmt *loop);
/* Cuts every loop's pipeline depth to its largest trip count (serial for
   one trip); lowering calls it on each kernel it makes. */
void tile_fit_stages(Kernel *k);
/* A loop's reductions into row states the loop does not read, taken out of
   it (defer.c): the reduced tile accumulates element-wise by the monoid
   and one reduction after the loop folds it; lowering of fused kernels
   calls it. */
void tile_defer_reductions(Kernel *k, Arena *a);
/* Simplify every index expression of the kernel by the ranges of its
   variables (simplify.c): x // c and x % c where x = c Q + R with R in
   [0, c) become Q and R (a reshape's flat offset split again).  Lowering
   calls it on each kernel it makes, after the grid is placed. */
void tile_simplify_indices(Kernel *k, Arena *a);
/* The same on one expression, variable v ranging over [lo[v], hi[v]]
   (lo > hi: unknown); for tests. */
SExpr *tile_simplify_index(Arena *a, SExpr *e, const int64_t *lo, const int64_t *hi);

/* Builders of expressions (in the program's arena). */
SExpr *sx_int(Arena *a, int64_t v);
SExpr *sx_real(Arena *a, double v);
SExpr *sx_var(Arena *a, TVar v);
SExpr *sx_idx(Arena *a, IdxOp op, SExpr *x, SExpr *y);   /* folds constants */
SExpr *sx_op(Arena *a, Op op, ElemKind ek, SExpr **args, int n);
SExpr *sx_load(Arena *a, TBuf *buf, SExpr **idx, int n);
SExpr *sx_tile(Arena *a, TBuf *buf, SExpr *i, SExpr *j); /* j NULL for rank 1 */
/* A copy of e with each variable v that repl[v] names replaced by it. */
SExpr *sx_subst_vars(Arena *a, const SExpr *e, SExpr *const repl[TV_COUNT]);
/* ... in every expression of every statement of l, nested ones too */
void tile_subst_list(Arena *a, StmtList *l, SExpr *const repl[TV_COUNT]);
/* A grid past CUDA's y/z limit (65535) folded into x, the block ids
   recovered from bx by division; false if even x cannot hold it (2^31 - 1). */
bool tile_fold_grid(Arena *a, Kernel *k);
bool tile_fold_grid_at(Arena *a, Kernel *k, int64_t limit); /* (y or z beyond limit: tests fold small grids) */

#endif
