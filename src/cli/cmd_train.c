/*
 * cmd_train.c: `tilesmith train`, a loss entry trained on the CPU
 * (src/train) under the standard parametrization or the derived one
 * (src/hparams), with progress on the terminal and a CSV of the steps.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../grad/grad.h"
#include "../train/train.h"
#include "cli.h"

typedef struct Logger { FILE *csv; bool tty; int64_t steps; } Logger;

static void on_log(const TrainLog *l, void *ud) {
  Logger *lg = ud;
  printf("step %*lld/%lld  loss %.5f  lr %.3g  |grad| %.3g  %.1f s  %.0f samples/s\n", lg->steps >= 10000 ? 6 : 4,
         (long long)l->step, (long long)lg->steps, l->loss, l->lr, l->grad_norm, l->seconds, l->samples_per_s);
  if (lg->tty) fflush(stdout);
  if (lg->csv) fprintf(lg->csv, "%lld,%.9g,%.9g,%.9g,%.6f,%.3f\n", (long long)l->step, l->loss, l->lr, l->grad_norm,
                       l->seconds, l->samples_per_s);
}

/* The indices an Index input can hold, [0, bound): the smallest extent
   of the axes it gathers along (crossEntropy's classes, an embedding's
   rows), reached through layout ops; -1 when it gathers nothing.  *at: the
   gather (its source position names it). */
static int64_t index_bound(const Graph *g, const Node *in, const Node **at) {
  int64_t bound = -1;
  const Node *todo[64];
  int n = 0;
  todo[n++] = in;
  while (n) {
    const Node *m = todo[--n];
    for (int i = 0; i < g->nnodes; i++) {
      const Node *u = g->nodes[i];
      for (int k = 0; k < u->nin; k++) {
        if (u->in[k] != m) continue;
        if (op_info[u->op].cls == OPC_LAYOUT && n < 64) {
          todo[n++] = u;
        } else if (u->op == OP_GATHER && k == 1) {
          int64_t ext = u->in[0]->shape.d[u->axis].n;
          if (bound < 0 || ext < bound) bound = ext, *at = u;
        }
      }
    }
  }
  return bound;
}

/* "at FILE:LINE:COL" of a node, for messages about data */
static const char *where(const Node *n, char *buf, size_t len) {
  Pos p = n->site.file ? n->site : n->pos; /* the user's call site of a prelude op */
  if (p.file) snprintf(buf, len, "%s at %s:%u:%u", n->via ? n->via : "the gather", p.file->name, p.line, p.col);
  else snprintf(buf, len, "a gather");
  return buf;
}

/* The entry's data from --data and --text (message printed on an error). */
bool train_load_data(Opts *o, Graph *g, TrainData *data, unsigned char **text_) {
  unsigned char *text = NULL;
  /* the data: arrays by input name, or a byte corpus for two Index inputs */
  for (int i = 0; i < o->nins; i++) {
    const Node *in = NULL;
    for (int k = 0; k < g->ninputs; k++)
      if (!strcmp(g->inputs[k]->name, o->ins[i].name)) in = g->inputs[k];
    if (!in || in->role == ROLE_PARAM) {
      fprintf(stderr, "tilesmith: error: --data %s: '%s' is not a Tensor or Index input of '%s'\n", o->ins[i].name,
              o->ins[i].name, o->entry);
      goto fail;
    }
    char e[512];
    Tensor *t = train_read_array(o->ins[i].path, e, sizeof e);
    if (!t) {
      fprintf(stderr, "tilesmith: error: %s\n", e);
      goto fail;
    }
    int64_t B = in->shape.rank ? in->shape.d[0].n : 1, per = B ? shape_numel(&in->shape) / B : 0;
    int64_t rows = t->shape.rank ? t->shape.d[0].n : 0;
    if (t->shape.rank && !rows) {
      fprintf(stderr, "tilesmith: error: --data %s: %s has no rows\n", o->ins[i].name, o->ins[i].path);
      tensor_free(t);
      goto fail;
    }
    if (!in->shape.rank || !rows || shape_numel(&t->shape) != rows * per || (data->narrays && rows != data->nsamples) ||
        data->narrays >= 16) {
      char sh[128], sh2[128];
      fprintf(stderr, "tilesmith: error: --data %s: %s holds %s; the input is %s, so it needs rows of %lld elements%s\n",
              o->ins[i].name, o->ins[i].path, shape_str(&t->shape, sh, sizeof sh), shape_str(&in->shape, sh2, sizeof sh2),
              (long long)per, data->narrays ? " and as many rows as the other arrays" : "");
      tensor_free(t);
      goto fail;
    }
    for (int k = 0; k < data->narrays; k++)
      if (data->arrays[k].input == in) {
        fprintf(stderr, "tilesmith: error: --data %s is given twice\n", in->name);
        tensor_free(t);
        goto fail;
      }
    bool index = in->kind == EK_INT;
    const Node *at = NULL;
    int64_t hi = index ? index_bound(g, in, &at) : -1;
    for (int64_t e2 = 0; e2 < rows * per; e2++) { /* it runs only when per >= 1 */
      double x = t->data[e2];
      bool whole = isfinite(x) && (!index || x == floor(x));
      if (whole && (hi < 0 || (x >= 0 && x < (double)hi))) continue;
      char why[200], w[160];
      if (whole)
        snprintf(why, sizeof why, "'%s' indexes [0, %lld) (%s)", in->name, (long long)hi, where(at, w, sizeof w));
      fprintf(stderr, "tilesmith: error: --data %s: %s holds %g at row %lld, element %lld: %s\n", in->name,
              o->ins[i].path, x, (long long)(e2 / per), (long long)(e2 % per),
              whole ? why : index ? "an Index input takes whole numbers" : "the data must be finite");
      tensor_free(t);
      goto fail;
    }
    data->arrays[data->narrays++] = (TrainArray){in, t};
    data->nsamples = rows;
    if (data->narrays == 1 && B > rows)
      fprintf(stderr, "tilesmith: warning: a batch of %lld rows (the input '%s') is more than the %lld rows of %s: "
              "each batch repeats rows (it runs on into the next epoch's order)\n", (long long)B, in->name,
              (long long)rows, o->ins[i].path);
  }
  if (o->text) {
    for (int k = 0; k < g->ninputs; k++) {
      const Node *in = g->inputs[k];
      if (in->role != ROLE_INDEX) continue;
      if (!data->ids) data->ids = in;
      else if (!data->targets) data->targets = in;
    }
    if (!data->targets || data->ids->shape.rank != 2 || !shape_equal(&data->ids->shape, &data->targets->shape)) {
      fprintf(stderr, "tilesmith: error: --text needs an entry whose first two Index inputs are ids and targets of one shape [B, N]\n");
      goto fail;
    }
    char e[512];
    text = train_read_text(o->text, &data->text_len, e, sizeof e);
    if (!text || data->text_len < data->ids->shape.d[1].n + 2) {
      if (text) fprintf(stderr, "tilesmith: error: --text %s: shorter than one window\n", o->text);
      else fprintf(stderr, "tilesmith: error: --text: %s\n", e);
      goto fail;
    }
    data->text = text;
    /* every byte must index what ids and targets gather from (a byte-level
       vocabulary narrower than 256 needs a corpus that fits it) */
    for (int r = 0; r < 2; r++) {
      const Node *in = r ? data->targets : data->ids, *at = NULL;
      int64_t hi = index_bound(g, in, &at);
      if (hi < 0 || hi >= 256) continue;
      for (int64_t b = 0; b < data->text_len; b++) {
        if (text[b] < hi) continue;
        char w[160];
        fprintf(stderr, "tilesmith: error: --text %s: byte %u at offset %lld is not below %lld, the vocabulary '%s' "
                        "indexes (%s)\n", o->text, text[b], (long long)b, (long long)hi, in->name, where(at, w, sizeof w));
        goto fail;
      }
    }
  }
  for (int k = 0; k < g->ninputs; k++) {
    const Node *in = g->inputs[k];
    bool have = in->role == ROLE_PARAM || in == data->ids || in == data->targets;
    for (int a = 0; a < data->narrays; a++) have |= data->arrays[a].input == in;
    if (!have) {
      fprintf(stderr, "tilesmith: error: no data for the input '%s' of '%s': pass --data %s=PATH.npy (rows along its first dimension)%s\n",
              in->name, o->entry, in->name, in->role == ROLE_INDEX ? " or --text PATH" : "");
      goto fail;
    }
  }
  *text_ = text;
  return true;
fail:
  free(text);
  return false;
}

/* TrainOpts from the options train and sweep share. */
void train_opts(const Opts *o, TrainOpts *to_) {
  TrainOpts to = {.steps = o->steps ? o->steps : 100, .lr = o->lr > 0 ? o->lr : 1e-3, .lr_adam = o->lr_adam,
                  .momentum = 0.9, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .wd = o->wd,
                  .warmup = o->warmup, .clip = o->clip, .seed = o->seed, .log_every = o->log_every ? o->log_every : 10,
                  .init_dir = o->init_dir, .save_dir = o->save_dir, .exec_f64 = o->exec_f64};
  to.opt = TOPT_ADAMW; /* main.c checked the names */
  if (o->optimizer) train_optimizer_parse(o->optimizer, &to.opt);
  if (to.opt == TOPT_LION) to.beta2 = 0.99;
  if (to.opt == TOPT_MUON) to.momentum = 0.95;
  to.sched = TSCHED_CONSTANT;
  if (o->lr_schedule) train_schedule_parse(o->lr_schedule, &to.sched);
  *to_ = to;
}

bool train_lr_mults_apply(const Opts *o, HpPlan *pl) {
  for (int k = 0; k < o->nlr_mults; k++) {
    const struct LrMult *l = &o->lr_mults[k];
    HpParam *p = NULL;
    for (int i = 0; i < pl->n && !p; i++)
      if (!strcmp(pl->params[i].param->name, l->name)) p = &pl->params[i];
    if (!p) {
      fprintf(stderr, "tilesmith: error: --lr-mult %s: the entry has no Param %s (its Params:", l->name, l->name);
      for (int i = 0; i < pl->n; i++) fprintf(stderr, " %s", pl->params[i].param->name);
      fprintf(stderr, ")\n");
      return false;
    }
    double f = l->factor;
    if (l->base) {
      bool depth = l->base == 'd';
      if (!o->param_derived || (depth ? !o->depth_spec : !o->width_spec)) {
        fprintf(stderr, "tilesmith: error: --lr-mult %s=%s^%g needs --param derived with --%s SYM=BASE\n", l->name,
                depth ? "depth" : "width", l->power, depth ? "depth" : "width");
        return false;
      }
      f = pow(depth ? pl->depth_mult : pl->width_mult, l->power);
    }
    p->lr_mult *= f;
  }
  return true;
}

int train_opts_check(const Opts *o) {
  int64_t steps = o->steps ? o->steps : 100;
  if (o->warmup >= steps) /* the schedule had dropped it and the header still said "warmup" */
    return usage_error("--warmup %lld is not shorter than the %lld steps", (long long)o->warmup, (long long)steps);
  if (o->lr_adam > 0 && !(o->optimizer && !strcmp(o->optimizer, "muon")))
    fprintf(stderr, "tilesmith: warning: --adamw-lr sets the AdamW rate beside Muon; without --optimizer muon "
                    "it changes nothing\n");
  return EXIT_OK;
}

int cmd_train(Opts *o) {
  HpOpts ho = {0};
  Session s;
  session_open(&s);
  Graph *g = NULL;
  TrainData data = {0};
  unsigned char *text = NULL;
  FILE *csv = NULL;
  HpPlan pl = {0};
  int rc = train_opts_check(o);
  if (rc != EXIT_OK) goto done;
  rc = EXIT_USER;
  if (o->param_derived && !o->width_spec) {
    rc = usage_error("--param derived needs --width SYM=BASE (and --depth SYM=BASE for a deep model)");
    goto done;
  }
  if (o->optimizer && !strcmp(o->optimizer, "muon") && !o->width_spec) {
    rc = usage_error("--optimizer muon needs --width SYM (with --param sp: --width SYM alone) to tell hidden matrices");
    goto done;
  }
  if (!o->param_derived) { /* standard: the sizes are their own bases, every multiplier 1 */
    for (char *c = (char *)o->width_spec; c && *c; c++)
      if (*c == '=') {
        rc = usage_error("--param sp takes --width SYM without a base (the entry's own size is the base)");
            goto done;
      }
    o->depth_spec = NULL;
  }
  rc = hparams_setup(&s, o, &ho, &g);
  if (rc != EXIT_OK) goto done;
  rc = EXIT_USER;
  if (setjmp(s.jb)) goto done;
  grad_need_loss(g); /* before the data: a non-loss entry is told first */
  if (!train_load_data(o, g, &data, &text)) goto done;
  pl = hp_derive(g, &ho);
  if (!pl.n) {
    fprintf(stderr, "tilesmith: error: %s\n", pl.why);
    goto done;
  }
  if (!train_lr_mults_apply(o, &pl)) goto done;
  TrainOpts to;
  train_opts(o, &to);
  TrainProf prof = {0};
  if (o->profile) to.prof = &prof;
  struct stat st;
  bool there = o->init_dir && stat(o->init_dir, &st) == 0;
  if (o->init_dir && (!there || !S_ISDIR(st.st_mode))) {
    fprintf(stderr, "tilesmith: error: --init %s: %s\n", o->init_dir,
            there ? "not a directory" : "no such directory (it holds PARAM.npy files)");
    goto done;
  }
  if (o->save_dir && mkdir(o->save_dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "tilesmith: error: cannot make the directory %s: %s\n", o->save_dir, strerror(errno));
    goto done;
  }
  if (o->out) {
    csv = fopen(o->out, "w");
    if (!csv) {
      fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", o->out, strerror(errno));
      goto done;
    }
    fprintf(csv, "step,loss,lr,grad_norm,seconds,samples_per_s\n");
  }
  printf("train %s: %d Params, %s parametrization, %s, lr %g (%s schedule%s), %lld steps, seed %llu, %s\n", o->entry,
         pl.n, o->param_derived ? "derived" : "standard", train_optimizer_name(to.opt), to.lr, train_schedule_name(to.sched),
         to.warmup ? ", warmup" : "", (long long)to.steps, (unsigned long long)to.seed, to.exec_f64 ? "float64" : "float32");
  Logger lg = {csv, isatty(1), to.steps};
  char why[200];
  bool diverged;
  double loss = train_run(g, &pl, &data, &to, on_log, &lg, why, sizeof why, &diverged);
  if (why[0]) {
    fprintf(stderr, "tilesmith: error: %s\n", why);
    goto done;
  }
  printf("final loss %.6f\n", loss);
  if (o->profile) train_profile_print(stdout, &prof);
  if (o->save_dir) printf("wrote the trained Params to %s/NAME.npy\n", o->save_dir);
  if (csv) printf("wrote %s\n", o->out);
  rc = EXIT_OK;
done:
  if (csv) fclose(csv);
  free(pl.params);
  for (int a = 0; a < data.narrays; a++) tensor_free(data.arrays[a].rows);
  free(text);
  hparams_free(&ho);
  session_close(&s);
  return rc;
}
