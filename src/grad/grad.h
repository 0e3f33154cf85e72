/*
 * grad.h: reverse-mode automatic differentiation on the graph IR.
 *
 * The gradient of a scalar entry (one element: shape [] or all ones) with
 * respect to every Param input is built into the same graph, as nodes of
 * the graph's own primitives, through the ir_* builders (so hash-consing
 * shares what the forward pass already computes, and the gradient can be
 * evaluated, lowered and optimized like any other graph).  The adjoint of
 * each node is the sum of its readers' contributions, each fitted to the
 * node's shape: summed over the axes broadcasting stretched, reshaped, and
 * stretched where a contribution is narrower (a sum's adjoint).
 * Derivatives at the kinks follow PyTorch's autograd: relu'(0) = 0, |x|'(0)
 * = 0, max/min split the adjoint evenly between tied operands, amax/amin
 * evenly among the tied elements of a row.
 */
#ifndef TS_GRAD_H
#define TS_GRAD_H

#include "../interp/interp.h"

typedef struct Grads {
  int n;              /* the entry's Param inputs, in input order */
  Node **param;       /* the Param input */
  Node **grad;        /* its gradient: a node of the same shape */
} Grads;

/* The entry is a loss (one real number), or an error at its result. */
void grad_need_loss(Graph *g);
/* The gradients of g->output with respect to g's Params (arena-allocated).
   Unwinds through g->ctx with an error at the output's source when the
   output is not a real tensor of one element. */
Grads grad_build(Graph *g);

/* Central differences in float64 against the gradients of gr at inputs
   (one per graph input; the loss is g->output): for each Param, every
   element when it has at most `samples`, else `samples` elements drawn at
   random (a fixed sequence), each moved by h = 1e-6 * max(1, |x|) both
   ways.  err[k] is the largest |analytic - numeric| / max(1, |analytic|,
   |numeric|) over Param k's sampled elements; beyond[k] the same with the
   difference's own rounding (4 eps |loss| / h) taken off first, what a
   bound should judge; checked[k] how many elements were sampled (caller's
   arrays of gr->n).  Unwinds through g->ctx on an evaluation error. */
void grad_check(Graph *g, const Grads *gr, Tensor **inputs, int samples, double *err, double *beyond,
                int64_t *checked);

/* The backward pass of g's entry for autograd: a new Tensor input `gy`
   (named gy_name, or with a suffix when an input has that name) of the
   output's shape, and g->output replaced by the vector-Jacobian product:
   the gradients of sum(output * gy) with respect to every real input
   (Tensor and Param alike, in input order; Index inputs have none), each
   flattened, concatenated into one vector.  *diff (arena) gets the
   differentiated inputs and *ndiff their count (0: the output is then a
   single zero).  Unwinds through g->ctx when the output is not real. */
void grad_vjp(Graph *g, const char *gy_name, Node ***diff, int *ndiff);

/* The entry's backward pass as an entry of its own, what `opt --grad`
   writes to OUT_backward.py and `verify --grad` checks: grad_vjp with the
   incoming gradient named grad_out, the entry renamed <entry>_backward.
   diff and ndiff as grad_vjp's (either may be NULL). */
void grad_backward_entry(Graph *g, Node ***diff, int *ndiff);

#endif
