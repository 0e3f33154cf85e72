/*
 * train.c: the training loop, the optimizers and the schedules.
 *
 * One step: a batch of the data into the entry's Tensor and Index inputs;
 * each Param's value as the graph sees it (its stored value times its
 * forward scale: the readout's output multiplier, the branch multiplier on
 * the last matrix of each residual block; a multiplier of a product's
 * operand is one of its output); the loss and every gradient in one pass
 * (exec32_run_many, float32 and sgemm; interp_run_many, the float64
 * interpreter, with exec_f64); the gradients of the stored values (times the scale);
 * a global-norm clip; then each Param's update.  The optimizers follow
 * PyTorch's definitions (torch.optim.SGD with momentum and L2 weight decay,
 * AdamW with decoupled decay and bias correction, Lion (Chen et al. 2023),
 * Muon: Nesterov momentum, the update orthogonalized by five Newton-Schulz
 * steps (Jordan's quintic coefficients 3.4445, -4.7750, 2.0315) per matrix,
 * decoupled decay), with the learning rate of each Param scaled by its
 * lr_mult and the schedule, its decay by wd_mult and Adam's epsilon by
 * eps_mult.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../grad/grad.h"
#include "train.h"

const char *train_optimizer_name(TrainOptimizer o) {
  switch (o) {
  case TOPT_SGD: return "sgd";
  case TOPT_ADAMW: return "adamw";
  case TOPT_LION: return "lion";
  case TOPT_MUON: return "muon";
  }
  return "?";
}

const char *train_schedule_name(TrainSchedule s) {
  switch (s) {
  case TSCHED_CONSTANT: return "constant";
  case TSCHED_COSINE: return "cosine";
  case TSCHED_LINEAR: return "linear";
  case TSCHED_WSD: return "wsd";
  }
  return "?";
}

bool train_optimizer_parse(const char *s, TrainOptimizer *o) {
  for (int i = 0; i <= TOPT_LAST; i++)
    if (s && !strcmp(s, train_optimizer_name((TrainOptimizer)i))) return *o = (TrainOptimizer)i, true;
  return false;
}

bool train_schedule_parse(const char *s, TrainSchedule *sc) {
  for (int i = 0; i <= TSCHED_LAST; i++)
    if (s && !strcmp(s, train_schedule_name((TrainSchedule)i))) return *sc = (TrainSchedule)i, true;
  return false;
}

/* "a, b, c or d" of names(0..last), in buf */
static const char *name_list(char *buf, size_t n, int last, const char *(*name)(int)) {
  buf[0] = 0;
  for (int i = 0; i <= last; i++)
    snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i == 0 ? "" : i == last ? " or " : ", ", name(i));
  return buf;
}
static const char *opt_name_i(int i) { return train_optimizer_name((TrainOptimizer)i); }
static const char *sched_name_i(int i) { return train_schedule_name((TrainSchedule)i); }

const char *train_optimizer_list(void) {
  static char buf[128];
  return name_list(buf, sizeof buf, TOPT_LAST, opt_name_i);
}

const char *train_schedule_list(void) {
  static char buf[128];
  return name_list(buf, sizeof buf, TSCHED_LAST, sched_name_i);
}

void train_set_threads(int n) {
  if (n < 1) n = 1;
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
  openblas_set_num_threads(n);
}

/* The schedule's factor at step t (0-based) of T. */
static double schedule(const TrainOpts *o, int64_t t) {
  int64_t T = o->steps, w = o->warmup < T ? o->warmup : 0;
  if (t < w) return (double)(t + 1) / (double)w;
  double x = T > w ? (double)(t - w) / (double)(T - w) : 0;
  switch (o->sched) {
  case TSCHED_CONSTANT: return 1;
  case TSCHED_COSINE: return 0.5 * (1 + cos(3.14159265358979323846 * x));
  case TSCHED_LINEAR: return 1 - x;
  case TSCHED_WSD: {
    double d = o->decay_frac > 0 ? o->decay_frac : 0.2;
    return x < 1 - d ? 1 : (1 - x) / d;
  }
  }
  return 1;
}

/* A Param in training.  In float64 (the interpreter's step) its values
   live in the Tensors; in float32 (the executor's) in the float arrays,
   value->data holding only the initial and the final values. */
typedef struct PState {
  const HpParam *hp;
  int input;           /* index in g->inputs */
  Tensor *value;       /* stored */
  Tensor *eff;         /* what the graph sees: value * scale (value itself when scale is 1) */
  double scale;
  double *m, *v;       /* optimizer state (float64) */
  float *w32, *eff32, *m32, *v32, *g32; /* the same in float32, and its gradient */
  int64_t n;
} PState;

/* ---- the updates, in float64 and in float32 (update.inc) ---- */

#define REAL double
#define SQRT sqrt
#define GEMM cblas_dgemm
#define SUF f64
#include "update.inc"
#undef REAL
#undef SQRT
#undef GEMM
#undef SUF
#define REAL float
#define SQRT sqrtf
#define GEMM cblas_sgemm
#define SUF f32
#include "update.inc"
#undef REAL
#undef SQRT
#undef GEMM
#undef SUF

/* ---- data ---- */

static void fill_batch(TrainData *d, Tensor **inputs, int64_t step, const TrainOpts *o, int64_t *perm, int64_t *epoch) {
  Rng rng;
  if (d->text) {
    Tensor *ids = inputs[d->ids->input_index], *tg = inputs[d->targets->input_index];
    int64_t B = d->ids->shape.d[0].n, N = d->ids->shape.d[1].n;
    rng_seed(&rng, o->seed * 7919u + (uint64_t)step);
    for (int64_t b = 0; b < B; b++) {
      int64_t s = rng_below(&rng, d->text_len - N);
      for (int64_t t = 0; t < N; t++) {
        ids->data[b * N + t] = d->text[s + t];
        tg->data[b * N + t] = d->text[s + t + 1];
      }
    }
    return;
  }
  int64_t B = d->narrays ? d->arrays[0].input->shape.d[0].n : 0, N = d->nsamples;
  for (int64_t b = 0; b < B; b++) {
    int64_t k = step * B + b, e = k / N;
    if (e != *epoch) { /* a new epoch: a new order */
      *epoch = e;
      rng_seed(&rng, o->seed * 104729u + (uint64_t)e);
      for (int64_t i = 0; i < N; i++) perm[i] = i;
      for (int64_t i = N - 1; i > 0; i--) {
        int64_t j = rng_below(&rng, i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
      }
    }
    int64_t row = perm[k % N];
    for (int a = 0; a < d->narrays; a++) {
      const TrainArray *ar = &d->arrays[a];
      int64_t per = shape_numel(&ar->input->shape) / B;
      memcpy(inputs[ar->input->input_index]->data + b * per, ar->rows->data + row * per, sizeof(double) * (size_t)per);
    }
  }
}

/* ---- the loop ---- */

double train_run(Graph *g, const HpPlan *plan, TrainData *data, const TrainOpts *o,
                 void (*log)(const TrainLog *l, void *ud), void *ud, char *why, size_t whylen,
                 bool *diverged) {
  why[0] = 0;
  *diverged = false;
  Grads gr = grad_build(g);
  if (!gr.n || gr.n != plan->n) {
    snprintf(why, whylen, "the entry has no Params to train");
    return NAN;
  }
  bool f32 = !o->exec_f64;
  Tensor **inputs = calloc((size_t)g->ninputs + 1, sizeof *inputs);
  const float **in32 = calloc((size_t)g->ninputs + 1, sizeof *in32);
  PState *ps = calloc((size_t)gr.n, sizeof *ps);
  int nt = gr.n + 1 + (o->on_watch ? o->nwatch : 0);
  Node **targets = calloc((size_t)nt, sizeof *targets);
  Tensor **outs = calloc((size_t)nt, sizeof *outs);
  float **out32 = calloc((size_t)nt, sizeof *out32);
  int64_t *perm = data->nsamples > 0 ? calloc((size_t)data->nsamples, sizeof *perm) : NULL;
  double *work = NULL;
  double result = NAN;
  /* data inputs */
  for (int i = 0; i < g->ninputs; i++) {
    const Node *in = g->inputs[i];
    if (in->role == ROLE_PARAM) continue;
    inputs[i] = tensor_new(&in->shape, in->kind);
  }
  /* Params: initialized as the plan says */
  int64_t most = 0;
  for (int k = 0; k < gr.n; k++) {
    PState *p = &ps[k];
    p->hp = &plan->params[k];
    p->input = gr.param[k]->input_index;
    p->n = shape_numel(&gr.param[k]->shape);
    p->value = tensor_new(&gr.param[k]->shape, EK_REAL);
    p->scale = p->hp->output_mult * (p->hp->branch_last ? plan->branch_mult : 1);
    if (f32) {
      size_t nb = (size_t)p->n + 1;
      p->w32 = malloc(nb * sizeof(float)), p->g32 = malloc(nb * sizeof(float));
      p->m32 = calloc(nb, sizeof(float)), p->v32 = calloc(nb, sizeof(float));
      p->eff32 = p->scale == 1 ? p->w32 : malloc(nb * sizeof(float));
      in32[p->input] = p->eff32;
      out32[k + 1] = p->g32;
      p->eff = p->value;
    } else {
      p->m = calloc((size_t)p->n + 1, sizeof(double));
      p->v = calloc((size_t)p->n + 1, sizeof(double));
      p->eff = p->scale == 1 ? p->value : tensor_new(&gr.param[k]->shape, EK_REAL);
    }
    if (!p->value || !p->eff || (f32 ? !p->w32 || !p->g32 || !p->m32 || !p->v32 || !p->eff32 : !p->m || !p->v)) {
      snprintf(why, whylen, "out of memory for Param '%s' (%lld elements) and its optimizer state", gr.param[k]->name,
               (long long)p->n);
      goto out;
    }
    inputs[p->input] = p->eff;
    Rng rng;
    rng_seed(&rng, o->seed * 1000003u + (uint64_t)k * 7u + 1u);
    for (int64_t i = 0; i < p->n; i++)
      p->value->data[i] = p->hp->init_std > 0 ? p->hp->init_std * rng_normal(&rng) : p->hp->init_value;
    if (o->init_dir) {
      char path[4096], e[512];
      snprintf(path, sizeof path, "%s/%s.npy", o->init_dir, gr.param[k]->name);
      FILE *f = fopen(path, "rb");
      if (f) {
        fclose(f);
        Tensor *t = npy_read(path, e, sizeof e);
        const Shape *want = &gr.param[k]->shape;
        if (!t || !shape_equal(&t->shape, want)) {
          char a[128], b[128];
          if (t)
            snprintf(e, sizeof e, "the array has shape %s, but '%s' has shape %s", shape_str(&t->shape, a, sizeof a),
                     gr.param[k]->name, shape_str(want, b, sizeof b));
          snprintf(why, whylen, "--init %s: %s", path, e);
          tensor_free(t);
          goto out;
        }
        for (int64_t i = 0; i < p->n; i++)
          if (!isfinite(t->data[i])) {
            snprintf(why, whylen, "--init %s: holds %g at element %lld: initial values must be finite", path,
                     t->data[i], (long long)i);
            tensor_free(t);
            goto out;
          }
        memcpy(p->value->data, t->data, sizeof(double) * (size_t)p->n);
        tensor_free(t);
      }
    }
    if (f32) {
      for (int64_t i = 0; i < p->n; i++) p->w32[i] = (float)p->value->data[i];
      if (p->eff32 != p->w32) scaled_f32(p->eff32, p->w32, p->n, p->scale);
    }
    int64_t sz = p->n * 4 + 64;
    if (sz > most) most = sz;
    targets[k + 1] = gr.grad[k];
  }
  targets[0] = g->output;
  for (int w = 0; w < nt - gr.n - 1; w++) targets[gr.n + 1 + w] = o->watch[w];
  work = calloc((size_t)most, sizeof(double));
  int64_t epoch = -1;
  double t0 = ts_seconds(), tlast = t0;
  int64_t samples = g->ninputs && data->narrays ? data->arrays[0].input->shape.d[0].n
                    : data->ids ? data->ids->shape.d[0].n : 1;
  for (int64_t step = 0; step < o->steps; step++) {
    fill_batch(data, inputs, step, o, perm, &epoch);
    for (int k = 0; k < gr.n && !f32; k++)
      if (ps[k].eff != ps[k].value) scaled_f64(ps[k].eff->data, ps[k].value->data, ps[k].n, ps[k].scale);
    bool watching = o->on_watch && (step == 0 || step + 1 == o->steps);
    TrainProf *pr = step > 0 ? o->prof : NULL;
    double t_run = pr ? ts_seconds() : 0;
    if (f32) {
      Exec32Io io = {in32, out32, pr ? &pr->exec : NULL};
      exec32_run_io(g, inputs, targets, watching ? nt : gr.n + 1, outs, &io);
    } else {
      interp_run_many(g, inputs, targets, watching ? nt : gr.n + 1, outs);
    }
    double t_upd = pr ? ts_seconds() : 0;
    if (pr) pr->run_s += t_upd - t_run;
    for (int w = 0; watching && w < o->nwatch; w++) {
      const Tensor *t = outs[gr.n + 1 + w];
      double ss = 0;
      int64_t ne = shape_numel(&t->shape);
      for (int64_t i = 0; i < ne; i++) ss += t->data[i] * t->data[i];
      o->on_watch(step, w, ne ? sqrt(ss / (double)ne) : 0, o->watch_ud);
    }
    double loss = outs[0]->data[0], gn = 0;
    bool logged = log && (!isfinite(loss) || step + 1 == o->steps || step == 0 ||
                          (o->log_every > 0 && (step + 1) % o->log_every == 0));
    /* the global norm: for the clip, and for the log (a pass over every
       gradient, skipped on steps that need neither) */
    for (int k = 0; k < gr.n && (o->clip > 0 || logged); k++)
      gn += f32 ? sumsq_f32(ps[k].g32, ps[k].n, ps[k].scale) : sumsq_f64(outs[k + 1]->data, ps[k].n, ps[k].scale);
    gn = sqrt(gn);
    double clip = o->clip > 0 && gn > o->clip ? o->clip / gn : 1;
    double f = schedule(o, step), t = (double)(step + 1);
    for (int k = 0; k < gr.n; k++) {
      PState *p = &ps[k];
      bool muon = o->opt == TOPT_MUON && p->hp->muon;
      TrainOptimizer kind = o->opt == TOPT_MUON && !muon ? TOPT_ADAMW : o->opt;
      double lr = o->lr * f * p->hp->lr_mult, wd = o->wd * p->hp->wd_mult;
      if (o->opt == TOPT_MUON && !muon) lr = (o->lr_adam > 0 ? o->lr_adam : o->lr) * f * p->hp->lr_mult;
      const Shape *sh = &p->value->shape;
      if (f32) {
        update_f32(o, kind, p->hp, sh, p->w32, p->g32, p->m32, p->v32, p->n, p->scale * clip, lr, wd, t, (float *)work);
        if (p->eff32 != p->w32) scaled_f32(p->eff32, p->w32, p->n, p->scale);
      } else {
        update_f64(o, kind, p->hp, sh, p->value->data, outs[k + 1]->data, p->m, p->v, p->n, p->scale * clip, lr, wd, t,
                   work);
      }
    }
    if (pr) pr->update_s += ts_seconds() - t_upd, pr->steps++;
    for (int k = 0; k < nt; k++) tensor_free(outs[k]), outs[k] = NULL;
    bool bad = !isfinite(loss);
    if (logged) {
      double tn = ts_seconds();
      TrainLog l = {step + 1, loss, o->lr * f, gn, tn - t0, 0};
      l.samples_per_s = (double)samples * (double)(o->log_every > 0 && step ? o->log_every : 1) / fmax(tn - tlast, 1e-9);
      tlast = tn;
      log(&l, ud);
    }
    result = loss;
    if (bad) {
      snprintf(why, whylen, "the loss is %g at step %lld: training diverged", loss, (long long)(step + 1));
      *diverged = true;
      result = NAN;
      break;
    }
  }
  if (o->save_dir && !why[0]) {
    for (int k = 0; k < gr.n; k++) {
      if (f32)
        for (int64_t i = 0; i < ps[k].n; i++) ps[k].value->data[i] = ps[k].w32[i];
      char path[4096], e[512];
      snprintf(path, sizeof path, "%s/%s.npy", o->save_dir, gr.param[k]->name);
      if (!npy_write(path, ps[k].value, e, sizeof e)) {
        snprintf(why, whylen, "%s", e);
        result = NAN;
        break;
      }
    }
  }
out:
  for (int i = 0; i < g->ninputs; i++)
    if (g->inputs[i]->role != ROLE_PARAM) tensor_free(inputs[i]);
  for (int k = 0; k < gr.n; k++) {
    if (ps[k].eff != ps[k].value) tensor_free(ps[k].eff);
    tensor_free(ps[k].value);
    free(ps[k].m);
    free(ps[k].v);
    if (ps[k].eff32 != ps[k].w32) free(ps[k].eff32);
    free(ps[k].w32);
    free(ps[k].m32);
    free(ps[k].v32);
    free(ps[k].g32);
  }
  free(work);
  free(perm);
  free(outs);
  free(out32);
  free(in32);
  free(targets);
  free(ps);
  free(inputs);
  return result;
}
