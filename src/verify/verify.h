/*
 * verify.h: checking a tile program against the graph it was lowered from.
 *
 * A trial runs the tile interpreter and the float64 graph interpreter on the
 * same inputs (rounded to the storage type first, so both see the same
 * values) and checks every global tensor the tile program writes, in kernel
 * order, against the graph's value of its node computed *from the tile
 * program's own values of the other globals*: each kernel is judged on its
 * own inputs, so rounding upstream is not blamed on it and the first
 * mismatch names the kernel at fault; the tolerance adds a bound on the
 * error the kernel's own low-precision evaluation may make (interp_bound),
 * so a fused kernel is judged by the conditioning of what it computes.
 * With normal inputs the final output is also compared end to end with
 * the all-float64 result, with a looser tolerance, as a note in the
 * summary (precision drift, not a failure).  verify_entry is `tilesmith
 * verify`: it shrinks the entry's sizes to small instances (with and
 * without tails) and runs trials on each.
 */
#ifndef TS_VERIFY_H
#define TS_VERIFY_H

#include "../front/front.h"
#include "../interp/interp.h"
#include "../tile/tile.h"

/* The kinds of inputs a trial draws. */
typedef enum {
  VIN_NORMAL,       /* normal(0, 1) */
  VIN_LARGE,        /* normal scaled to large magnitudes (large logits) */
  VIN_TIES,         /* small integers: many equal values */
  VIN_MASKED_ROWS,  /* every last-axis row very negative but one element */
  VIN_EXTREME,      /* a mix of huge, tiny (subnormal in f16) and normal values */
  VIN_RAMP,         /* normal times a factor rising 1 -> 4 along the flat order:
                       a running max moves at most tiles, by amounts a streamed
                       state's rescale must follow, at magnitudes still bounded */
  VIN_WIDE_INTEGERS, /* integers in [-16, 16]: products and their sums exact, so
                       large, far-apart logits keep a tight error bound (where
                       "large" is vacuous: a fused softmax checked at large
                       scores) */
} VerifyInput;
#define VIN_COUNT 7
const char *verify_input_name(VerifyInput k);

/* Fill inputs[i] for every graph input (caller frees): indices valid
   (ir_index_bound; weights scaled by ir_fan_in), real values of the given kind, rounded to dt. */
void verify_inputs(Graph *g, DType dt, VerifyInput kind, uint64_t seed, Tensor **inputs);

typedef struct VerifyResult {
  bool pass;
  bool skipped;           /* passed vacuously: the inputs are out of the type's range */
  const Kernel *kernel;   /* on failure: the first kernel at fault (NULL if none is) */
  const Stmt *stmt;       /* the statement that stores (or faulted) */
  char msg[768];          /* on failure: what went wrong; on success: a summary */
  double worst;           /* largest error as a fraction of its tolerance */
  int64_t elements;       /* real elements checked against a finite reference ... */
  int64_t unverifiable;   /* ... and those whose error bound exceeds |value| (the
                             check there admits any value near 0: vacuous) */
} VerifyResult;

/* One trial of tp (lowered from tp->g) on inputs.  end_to_end: also compare
   the output with the all-float64 result (a note in res->msg).  Unwinds through tp->g->ctx only
   if the graph interpreter reports an error (everything freed). */
bool verify_trial(const TileProgram *tp, Tensor **inputs, bool end_to_end, VerifyResult *res);

/* Tolerance of a comparison in storage type dt: |got - want| <= rtol *
   (|want| + scale) + 2 * (the error bound of the kernel's evaluation). */
double verify_rtol(DType dt);

typedef struct VerifyOpts {
  DType dtype;
  uint64_t seed;
  int trials;           /* random-normal trials per instance (0 = 3) */
  FILE *out;            /* one line per trial and a summary */
  bool json;            /* instead, one JSON object: entry, dtype, results (one record per
                           check: status, instance, input, message, kernel, worst, elements,
                           unverifiable), instances, passed, failed, skipped_trials,
                           skipped_instances, elements, unverifiable, ok */
  /* the plan opt emits, searched at the entry's own sizes: each shrunken
     instance is lowered with it carried over (plan_transfer); NULL: the
     naive lowering */
  const struct Plan *plan;
  /* with a plan: each instance's graph is rewritten as opt rewrites it
     (equality saturation, extraction with sizes read at bind, the entry's
     own sizes), and checked against the graph it came from in float64 */
  const SizeArg *bind;
  int nbind;
  bool grad;            /* each instance is the entry's backward pass (grad_backward_entry) */
} VerifyOpts;

/* `tilesmith verify`: returns 0 if every trial passed, 1 otherwise (also when
   no instance could be built; the reason is printed to c->err). */
int verify_entry(Ctx *c, const Program *prog, const char *entry, SizeArg *sizes, int nsizes,
                 const VerifyOpts *o);

#endif
