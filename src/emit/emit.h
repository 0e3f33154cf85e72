/*
 * emit.h: emitting a tile program as a self-contained Python module.
 *
 * One module per entry and target (TileLang for sm_90a, or Triton): a
 * header naming the entry, its sizes and storage type; one function per
 * kernel, each commented with the source lines it implements; run(...),
 * whose parameters are the entry's Lean parameter names (names.c), which
 * checks its arguments (tensors of exactly the compiled shape and storage
 * type, contiguous, on the current CUDA device; nothing is cast, copied or
 * reshaped), allocates temporaries and the output, launches every kernel in
 * order and returns the output in the storage type; reference(...), a plain
 * float32 PyTorch version derived from the graph (not from the tile
 * program, so it checks the lowering too); and a __main__ that draws random
 * inputs, compares run with reference with tolerances per storage type and
 * times both with CUDA events.
 *
 * common.c writes everything but the kernels, the launches and the names
 * (names.c), and owns the one expression walker: the targets (tilelang.c,
 * triton.c) supply the spelling of each op as a template and print loads,
 * tile reads and constants their own way.  The declarations below the
 * public API are the emitters' internals, shared by these four files only.
 */
#ifndef TS_EMIT_H
#define TS_EMIT_H

#include "../tile/tile.h"

typedef enum { TARGET_TILELANG, TARGET_TRITON } Target;

/* Where the module came from, for its header comment (any may be NULL). */
typedef struct EmitInfo {
  const char *file;    /* the .lean file */
  const char *entry;   /* the entry definition */
  const char *sizes;   /* the --size bindings, "B=2,N=8" */
  const char *options; /* the other options that chose the module (" --schedule copy=1"), or NULL */
  const Graph *source; /* the graph as written, before the rewrite (NULL: the program's):
                          random_inputs() draws weights by its matmuls (ir_fan_in) */
} EmitInfo;

bool target_parse(const char *s, Target *t);  /* "tilelang" or "triton" */
const char *target_name(Target t);

/* A module over the entry's free sizes (dynamic.c): run() reads the sizes
   from its arguments' shapes, and each new set of sizes is compiled on first
   use by running tilesmith opt with them, then cached in memory and on disk. */
typedef struct DynInfo {
  const char *file;             /* the .lean file, as given */
  const unsigned char *source;  /* its text */
  size_t source_len;
  const char *entry;
  const char *tilesmith;        /* the absolute path of the binary writing the module */
  const char *version;          /* its version */
  const SizeArg *nats;          /* the entry's Nat parameters in order: value -1 when free */
  int nnats;
  const char *const *options;   /* opt's options each build repeats ("--gpu", "h200", ...) */
  int noptions;
} DynInfo;

/* tp: the entry lowered at placeholder sizes, whose inputs' and output's
   dimensions all carry their symbolic forms (the caller checks it).  False,
   with a message in err, on a failure to write. */
bool emit_dynamic_module(FILE *out, const TileProgram *tp, Target t, const DynInfo *info, char *err, size_t errlen);

/* Append to the module of fwd (already written to out) apply(...) and the
   torch.autograd.Function behind it, whose backward runs the module
   backward_file (a file name beside it: the entry's backward pass, built by
   grad_vjp) and gives run()'s arguments diff[0..ndiff) their gradients in
   that order (autograd.c). */
bool emit_autograd(FILE *out, const TileProgram *fwd, Target t, const char *backward_file, const int *diff,
                   int ndiff, char *err, size_t errlen);

/* Write the module of tp for target t to out.  False, with a message in
   err, when the program uses something the target cannot express (the
   module is then incomplete and must not be used). */
bool emit_module(FILE *out, const TileProgram *tp, Target t, const EmitInfo *info, char *err, size_t errlen);

/* ---- internals of the emitters (common.c, tilelang.c, triton.c) ---- */

typedef struct Emit Emit;

/* What a target supplies.  Op templates are Python text where %N is
   operand N as printed, $N operand N as a value of the target's own type
   (a tensor in Triton, where math functions reject Python numbers) and ?N
   operand N as a boolean condition. */
typedef struct EmitTarget {
  const char *name;
  const char *(*op_template)(Op op, ElemKind ek);
  /* exp through exp2, or NULL (then op_template's OP_EXP): exp_diff is
     exp(a·f − b·f) over a, b and $2 = f·log2e: exp2(a·$2 − b·$2) is one
     fused multiply-add an element where exp2((a − b)·log2e) is a
     subtraction and a multiply (b is a row's max, its product computed once
     a row); exp_scaled is exp(a·f) over a and $1 = f·log2e (a target sets
     both or neither).  The emitter finds the constant factor f (common.c:
     emit_exp2). */
  const char *exp_diff, *exp_scaled;
  /* integer division by a positive constant (Lean's Int division is then
     the floor): a shorter template than op_template's general one */
  const char *idiv_pos;
  /* a cast of an index expression (a loop variable, arithmetic on it) to a
     real, where the operand need not be a tensor (Triton's interpreter keeps
     a loop variable a Python int); NULL: op_template's */
  const char *cast_index;
  const char *idx_min, *idx_max, *idx_and;   /* spelling of IX_MIN, IX_MAX ("f(a, b)") and IX_AND (infix) */
  void (*constant)(Emit *e, const SExpr *x, bool as_value); /* SX_INT, SX_REAL */
  void (*load)(Emit *e, const SExpr *x);     /* SX_LOAD, converted to the compute type */
  void (*tile)(Emit *e, const SExpr *x);     /* SX_TILE */
  void (*var)(Emit *e, TVar v);              /* SX_VAR (NULL: its plain name) */
  void (*imports)(Emit *e);
  void (*kernel)(Emit *e, const Kernel *k);  /* the kernel's function */
  void (*launch)(Emit *e, const Kernel *k);  /* one line of run(): launch it */
  void (*extras)(Emit *e);                   /* after the kernels: caches, tables */
  /* tolerance of __main__'s check for f32 storage when a kernel has a gemm
     (0: the default 1e-4), for targets whose f32 gemm is TF32 */
  double f32_gemm_tolerance;
  const char *f32_gemm_note;
} EmitTarget;

struct Emit {
  FILE *out;
  Arena *a;
  const TileProgram *tp;
  const EmitTarget *t;
  const EmitInfo *info;
  const char **gname;       /* per global id: its Python name inside the module */
  const char **pname;       /* per graph input: run()'s and reference()'s parameter */
  const char *pre;          /* prefix of the helpers run() calls, no parameter's ("_ts_") */
  const char *outkw;        /* run()'s keyword for an output buffer: "out", or "out_"... where a parameter is out */
  const Kernel *k;          /* the kernel being written */
  int64_t blk[2];           /* the block shape of the statement being written (Triton) */
  const TBuf *staged[16];   /* fragments read through a shared copy (TileLang) */
  int stage_from[16];       /* ... by the top-level statements after this index */
  int nstaged;
  /* ... and those copied inside a loop, right after the reduction that
     writes them (read through the copy by the rest of that loop's body) */
  const TBuf *lstaged[8];
  const Stmt *lstage_after[8];
  bool lstage_on[8];
  int nlstaged;
  const TBuf *shared_a[8];  /* TileLang: computed product A operands written to shared memory */
  int nshared_a;
  int top;                  /* the index of the top-level statement being written */
  const TBuf *dual[16];     /* Triton: loaded tiles a loop feeds to tl.dot and reads otherwise too */
  int ndual;
  const struct Stmt *dual_fwd[16]; /* Triton: copies that hand a dual to tl.dot's operand (they read the first load) */
  int nfwd;
  bool reading_first;       /* Triton: emitting such a copy (a dual read by its first name) */
  bool evict_last;          /* Triton: loads written now ask to stay in cache (the second load of a dual) */
  const TBuf *tma[16];      /* Triton: the globals this kernel loads through tensor descriptors (_tma<n>), */
  int64_t tma_blk[16][2];   /* ... and the block each loads */
  int ntma;
  bool no_copy;             /* TileLang: loads stay element-wise maps here (the kernel's
                               schedule, or a loop that also fills a shared tile from threads) */
  bool failed;
  char err[512];
};

extern const EmitTarget emit_tilelang, emit_triton;

/* An Emit writing tp for target t to out, its names assigned (common.c);
   and its end: false, with the first failure's message in err, when any
   part failed. */
Emit emit_begin(FILE *out, const TileProgram *tp, Target t, const EmitInfo *info);
bool emit_end(const Emit *e, char *err, size_t errlen);

/* Fill gname, pname and pre (names.c). */
void emit_assign_names(Emit *e);

/* Printing helpers. */
void emit_printf(Emit *e, const char *fmt, ...) TS_PRINTF(2, 3);
void emit_fail(Emit *e, const char *fmt, ...) TS_PRINTF(2, 3);
void emit_expr(Emit *e, const SExpr *x);        /* the shared walker */
void emit_cond(Emit *e, const SExpr *x);        /* x as a boolean condition */
const char *emit_torch_dtype(DType t);          /* "torch.bfloat16" */
const char *emit_op_name(Emit *e, const char *entry); /* the custom op's name: entry with [^A-Za-z0-9_] as _ */
bool emit_is_real(DType t);                     /* f32, f16, bf16 */
/* A product tile thinner than 16 on a side (one row: M = 1), which neither
   tl.dot nor T.gemm takes: both emitters write it as a sum of products. */
bool emit_gemm_thin(const Stmt *s);
/* Do the indices idx[0..n) address a rectangle (what a bulk copy moves):
   one dimension the block's i runs along and one j does (di before dj),
   each as offset + the variable, the others free of both?  The dimensions
   and offsets (NULL for 0). */
bool emit_rect(SExpr *const *idx, int n, int *di, int *dj, const SExpr **oi, const SExpr **oj);
/* The globals a kernel reads or writes, in the program's order (an array
   from the arena in *out); returns the count. */
int emit_kernel_globals(Emit *e, const Kernel *k, const TBuf ***out);
/* A comment line naming the source lines a kernel implements. */
void emit_kernel_comment(Emit *e, const Kernel *k, const char *indent);
/* The storage shape of a global as a Python tuple ("(2, 8)"; "(1,)" for rank 0). */
const char *emit_shape_tuple(Emit *e, const TBuf *g);

#endif
