/*
 * train.h: training a model on the CPU (`tilesmith train`).
 *
 * The loss entry's gradient graph (src/grad) is evaluated with the loss in
 * one pass of the float32 executor (exec32_run_io: the forward values are
 * shared, intermediates freed after their last use, products by sgemm,
 * elementwise work over the cores), or of the float64 interpreter
 * (--exec f64); the Params are kept here, in the executor's number type, and updated by SGD with momentum, AdamW,
 * Lion or Muon (hidden matrices; AdamW for the rest), each with its
 * learning-rate, weight-decay and epsilon multipliers and its forward scale
 * from the parametrization (src/hparams: standard, or derived under μP with
 * depth scaling), a learning-rate schedule and gradient clipping.  The
 * entry's other inputs (Tensor and Index) are the data: batches of rows of
 * arrays given by name, or windows of a byte corpus for a language model.
 * Deterministic given the seed.
 */
#ifndef TS_TRAIN_H
#define TS_TRAIN_H

#include <stdio.h>

#include "../hparams/hparams.h"
#include "../interp/interp.h"

typedef enum { TOPT_SGD, TOPT_ADAMW, TOPT_LION, TOPT_MUON } TrainOptimizer;
typedef enum { TSCHED_CONSTANT, TSCHED_COSINE, TSCHED_LINEAR, TSCHED_WSD } TrainSchedule;
#define TOPT_LAST TOPT_MUON
#define TSCHED_LAST TSCHED_WSD
const char *train_optimizer_name(TrainOptimizer o);
const char *train_schedule_name(TrainSchedule s);
/* The enum value named s (false if none), and the names as a usage message
   lists them ("sgd, adamw, lion or muon"). */
bool train_optimizer_parse(const char *s, TrainOptimizer *o);
bool train_schedule_parse(const char *s, TrainSchedule *sc);
const char *train_optimizer_list(void);
const char *train_schedule_list(void);

typedef struct TrainOpts {
  int64_t steps;
  double lr;                 /* the base learning rate (each Param's is lr × its lr_mult × the schedule) */
  double lr_adam;            /* with Muon: the AdamW learning rate of the Params not on Muon (0: lr) */
  TrainOptimizer opt;
  double momentum;           /* SGD and Muon; Lion's and Adam's beta1 is beta1 */
  double beta1, beta2, eps, wd;
  TrainSchedule sched;
  int64_t warmup;            /* steps of linear warmup */
  double decay_frac;         /* warmup-stable-decay: the last fraction of steps decays linearly to 0 */
  double clip;               /* global gradient-norm clip (0: none) */
  uint64_t seed;
  int64_t log_every;
  const char *init_dir;      /* Params read from DIR/NAME.npy where there (else drawn) */
  const char *save_dir;      /* the trained Params written to DIR/NAME.npy (float64) */
  bool exec_f64;             /* the step in the float64 interpreter, not the float32 executor */
  struct TrainProf *prof;    /* where the time goes (NULL: not measured) */
  /* a coordinate check: the RMS of each watched node's value on the step's
     batch, before the first update and at the last step, to on_watch */
  Node *const *watch;
  int nwatch;
  void (*on_watch)(int64_t step, int index, double rms, void *ud);
  void *watch_ud;
} TrainOpts;

/* The data of one non-Param input: rows (dim 0) of an array. */
typedef struct TrainArray {
  const Node *input;
  Tensor *rows;              /* [N, ...the input's trailing dims] */
} TrainArray;

typedef struct TrainData {
  TrainArray arrays[16];
  int narrays;
  int64_t nsamples;          /* rows of each array (equal) */
  /* a byte corpus: windows of N + 1 bytes give ids (first Index input) and
     targets (second): ids[b, t] = text[s + t], targets[b, t] = text[s + t + 1] */
  const unsigned char *text;
  int64_t text_len;
  const Node *ids, *targets;
} TrainData;

/* Where a run's time went, from its second step on (the first allocates
   and faults in its memory): the executor's products and other work, and
   the optimizer's (norm, clip, updates). */
typedef struct TrainProf {
  Exec32Prof exec;           /* the float32 executor's (zero under --exec f64) */
  double run_s, update_s;    /* the step's evaluation (all of it) and the updates */
  int64_t steps;
} TrainProf;

typedef struct TrainLog {
  int64_t step;
  double loss, lr, grad_norm, seconds, samples_per_s;
} TrainLog;

/* Rows of an array from PATH[:COLUMNS][/DIVISOR] (data.c: .npy, CSV or
   CSV.gz, @digits), and the bytes of a text (a file or @licenses); NULL
   with the reason in err. */
Tensor *train_read_array(const char *spec, char *err, size_t errlen);
unsigned char *train_read_text(const char *spec, int64_t *len, char *err, size_t errlen);

/* Train g (a loss entry) with plan's parametrization; each logged step is
   passed to log (with ud).  Returns the final loss (NaN on divergence:
   training stops, *diverged set, why says at which step) or unwinds
   through g->ctx on an evaluation error; why is set (and NaN returned) on
   a setup error too (no Params, data that does not fit). */
/* Threads for the elementwise loops and sgemm from here on (a sweep's
   children share the cores). */
void train_set_threads(int n);

/* The profile as a few lines: a step's time split into the products, the
   executor's other work and the updates; then the same products (shapes
   and counts) replayed alone in sgemm on fresh buffers, and the step's
   throughput on them against sgemm's (profile.c). */
void train_profile_print(FILE *f, const TrainProf *p);

double train_run(Graph *g, const HpPlan *plan, TrainData *data, const TrainOpts *o,
                 void (*log)(const TrainLog *l, void *ud), void *ud, char *why, size_t whylen,
                 bool *diverged);

#endif
