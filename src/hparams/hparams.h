/*
 * hparams.h: the parametrization and optimizer plan of a model, derived
 * from its graph (`tilesmith hparams`).
 *
 * Every Param is classified from how its dimensions depend on the width
 * symbols and the depth symbol (their symbolic sizes, evaluated at the base
 * sizes and at the entry's) and from where it sits in the graph: the first
 * matrix product, gather or elementwise op its values reach (through
 * slices, reshapes and permutes, so W[l] of a stacked Param is seen) names
 * its fan-in and fan-out dimensions.  From the role follow its
 * initialization, learning-rate multiplier, output multiplier, weight-decay
 * and Adam-epsilon scaling under μP with depth scaling (CompleteP, α = 1;
 * depth-μP, α = ½), or the spectral scaling of Muon for hidden matrices.
 * The rules and their sources are stated once, in hparams.c.
 */
#ifndef TS_HPARAMS_H
#define TS_HPARAMS_H

#include "../ir/ir.h"

typedef enum { HP_INPUT, HP_HIDDEN, HP_READOUT, HP_VECTOR, HP_EMBEDDING } HpRole;
typedef enum { HP_ADAMW, HP_MUON } HpOptimizer;
const char *hp_role_name(HpRole r);

#define HP_MAX_WIDTH 8

/* A size symbol and its base value. */
typedef struct HpSym { const char *name; int64_t base; } HpSym;

typedef struct HpOpts {
  HpSym width[HP_MAX_WIDTH]; /* symbols that grow with the width (the first names it) */
  int nwidth;
  HpSym depth;               /* the number of residual blocks (name NULL: none) */
  const SizeArg *bind;       /* the entry's sizes */
  int nbind;
  HpOptimizer opt;
  double alpha;              /* depth exponent: 1 (CompleteP) or 0.5 (depth-μP) */
} HpOpts;

typedef struct HpParam {
  const Node *param;
  HpRole role;
  bool depth_branch;         /* stacked along the depth symbol: in the L-times repeated block */
  int fan_in_dim, fan_out_dim, depth_dim; /* dimensions of the Param, -1: none */
  int64_t fan_in, fan_out, fan_in_base, fan_out_base; /* per block */
  bool fan_in_width, fan_out_width;
  bool gain;                 /* a vector that multiplies (initialized to 1; else to 0) */
  bool muon;                 /* updated by Muon (hidden matrices under --optimizer muon) */
  bool between;              /* its product reads another product's result and feeds a third */
  bool tied;                 /* an embedding also multiplied as a matrix (tied input and output weights) */
  bool branch_last;          /* in the repeated block, its product reaches the residual add through
                                positively homogeneous ops only (reshape, permute, relu, a gain): scaling it
                                by branch_mult scales the block's update (how a trainer applies it) */
  int grown_dim;             /* a Param dimension on a batch axis of its product that grows with the width
                                (heads), counted into the fan-in (grown_into: summed after) or fan-out; -1 */
  bool grown_into;
  const Node *nonlinear;     /* an op on its values before its product that is not linear in them
                                (tanh W): no multiplier of its values is one of the product's output */
  const Node *use;           /* the node that decided the role (its source position) */
  double init_std, init_value, lr_mult, output_mult, wd_mult, eps_mult;
  char reason[640];
} HpParam;

typedef struct HpPlan {
  HpParam *params;
  int n;
  double width_mult;         /* width / base width (the first width symbol) */
  double depth_mult;         /* L / base L (1 without a depth symbol) */
  double branch_mult;        /* the multiplier of each residual block's update: depth_mult^-alpha */
  HpOptimizer opt;
  double alpha;
  char why[400];             /* set when the plan could not be made */
} HpPlan;

/* Classify g's Params and derive their scalings; plan.n == 0 and plan.why
   set on an error (an unbound symbol, no Params). */
HpPlan hp_derive(const Graph *g, const HpOpts *o);
/* Does some Param stack the blocks along the symbol depth ([L, ...], read
   only as W[l] in `layers`)? */
bool hp_has_stack(const Graph *g, const char *depth);

#endif
