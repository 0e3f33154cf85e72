/*
 * interp.h: the float64 reference interpreter of the graph IR, and NumPy
 * `.npy` input/output.
 *
 * Every value is a dense row-major array of doubles (integers and booleans
 * are held exactly as doubles).  The interpreter walks nodes in id order,
 * which is a topological order, and frees each intermediate after its last
 * use.  Matrix products go to BLAS (dgemm).  Out-of-range gather indices and
 * tensors too large to hold are user errors, reported at the op's source.
 */
#ifndef TS_INTERP_H
#define TS_INTERP_H

#include "../ir/ir.h"

typedef struct Tensor {
  Shape shape;
  ElemKind kind;
  double *data;        /* malloc'd; tensor_free releases it */
} Tensor;

Tensor *tensor_new(const Shape *s, ElemKind k);   /* zeroed; NULL if too large */
void tensor_free(Tensor *t);

/* Run the graph.  inputs[i] is the value of g->inputs[i].  Returns the output
   (caller frees) or unwinds through g->ctx on an error. */
Tensor *interp_run(Graph *g, Tensor **inputs);

/* The general run (verify uses it).  Evaluates `target` (NULL: the output).
   given (NULL, or one entry per node id) supplies values that stand for nodes
   (borrowed; their operands are not evaluated), so a node can be evaluated
   from values another evaluator computed.  keep (NULL, or one flag per node
   id) marks nodes whose values are returned in values[id] (NULL for nodes
   the target does not depend on; the caller frees them).  Returns the
   target's value (caller frees) or unwinds, freeing everything, on an error. */
Tensor *interp_run_ex(Graph *g, Tensor **inputs, Tensor **given, const Node *target, const bool *keep,
                      Tensor **values);

/* Several nodes in one pass, their shared operands evaluated once (a loss
   and its gradients): out[i] is targets[i]'s value (caller frees). Unwinds
   through g->ctx on an error. */
void interp_run_many(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out);

/* The same in float32 (exec32.c, the trainer's executor): inputs and
   outputs are float64 Tensors, every value in between float32, products by
   sgemm.  Same contract and errors; results differ from interp_run_many's
   by float32 rounding. */
void exec32_run_many(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out);

/* The executor's products, counted when a profile is asked for: each
   distinct sgemm shape (transposes, m, n, k) with its calls, and the time
   spent in sgemm and in the executor's own loops. */
#define EXEC32_MAX_GEMMS 128
typedef struct Exec32Gemm { bool ta, tb; int m, n, k; int64_t calls; } Exec32Gemm;
typedef struct Exec32Prof {
  double gemm_s, gemm_flops, other_s;
  int ngemm;
  Exec32Gemm gemm[EXEC32_MAX_GEMMS];
} Exec32Prof;

/* exec32_run_many with float32 at its edges (the trainer's step): in32
   (NULL, or one entry per input index) gives an input's values in float32,
   read in place (borrowed; its Tensor in inputs may then be NULL); out32
   (NULL, or one entry per target) takes a target's values in float32 into
   the caller's buffer of its element count, out[i] left NULL; prof (NULL:
   none) accumulates the run's profile. */
typedef struct Exec32Io { const float *const *in32; float *const *out32; Exec32Prof *prof; } Exec32Io;
void exec32_run_io(Graph *g, Tensor **inputs, Node *const *targets, int n, Tensor **out, const Exec32Io *io);

/* Running error analysis (bound.c): evaluates `target` as interp_run_ex
   does (given values and inputs are exact) and, in *bound (same shape,
   caller frees), a first-order bound per element on |computed - exact| for
   an evaluation that rounds node id's result with unit roundoff u[id] and
   accumulates its sums and products with uacc[id] (either NULL: 0 for
   every node).  The bound is infinite where it cannot be bounded (and at
   NaN); at an infinite value, 0 says that infinity is certain.  Returns the
   target's value (caller frees) or unwinds, freeing everything. */
Tensor *interp_bound(Graph *g, Tensor **inputs, Tensor **given, const Node *target, const double *u,
                     const double *uacc, Tensor **bound);
/* The bound is rigorous to first order for correctly rounded operations;
   this multiple of it covers faithfully rounded ones (math functions that
   err by up to one ulp, 2u): what verify tolerates, and the margin within
   which a comparison is taken to be able to flip. */
#define INTERP_BOUND_C 2.0

/* Fill random inputs for every graph input not given, by the rule of
   ir/inputs.c: normal(0, 1) for real inputs, normal(0, 1/fan_in) for a
   weight feeding a matmul (ir_fan_in; normal(0, 1) too with unit_weights),
   uniform over [0, ir_index_bound) for Index inputs. */
void interp_random_inputs(Graph *g, Tensor **inputs, uint64_t seed, bool unit_weights);

/* .npy files (format versions 1.0 to 3.0, C order; big-endian data is byte-swapped).  Reading
   accepts float32, float64, int32, int64 and bool; writing is float64.
   Errors are returned as a message in err (no unwinding). */
Tensor *npy_read(const char *path, char *err, size_t errlen);
bool npy_write(const char *path, const Tensor *t, char *err, size_t errlen);

#endif
