/*
 * cmd_sweep.c: `tilesmith sweep`, a grid of trainings (widths, depths,
 * learning rates, seeds, parametrizations) on the CPU's cores, its CSV,
 * the optimal learning rate of each width and depth as the vertex of a
 * parabola in log2(lr), and the picture a person looks at (gnuplot: loss
 * against learning rate, one curve per width, standard beside derived).
 *
 * Each training is `tilesmith train`'s (src/train) in a child process,
 * at most --jobs at a time; a finished one appends its row to the CSV at
 * once, so an interrupted sweep resumes where it stopped (rows already in
 * the CSV are not run again).  One an error stops writes no row (it runs
 * again on resume) and makes the sweep's status 1.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../grad/grad.h"
#include "../train/train.h"
#include "cli.h"

#define SWEEP_MAX 64

#define SWEEP_WATCH 128 /* products a coordinate check follows */

typedef struct Run {
  int param;
  int64_t width, depth;
  double lr;
  uint64_t seed;
  double loss;             /* NaN where it diverged */
  bool done;
  bool failed;             /* an error stopped it (said on stderr): no loss, not written, retried on resume */
  /* --coord: each forward product's output RMS before the first update and at the last step */
  int nwatch;
  double rms0[SWEEP_WATCH], rms1[SWEEP_WATCH];
  int line[SWEEP_WATCH];
} Run;

static void on_watch(int64_t step, int index, double rms, void *ud) {
  Run *r = ud;
  if (index < SWEEP_WATCH) (step == 0 ? r->rms0 : r->rms1)[index] = rms;
}

/* A grid's values: "64,128,256" (sizes: whole, below 2^31) or, for
   rates, also "1e-4:1e-1:7" (log-spaced, inclusive); their number, or -1
   with what is wrong said in why. */
static int parse_list(const char *flag, const char *s, double *out, int max, bool rates, char *why, size_t len) {
  if (rates && strchr(s, ':')) {
    double a, b;
    int n;
    char tail;
    if (sscanf(s, "%lf:%lf:%d%c", &a, &b, &n, &tail) != 3)
      return snprintf(why, len, "%s %s: a range is LO:HI:N, such as 1e-4:1e-1:7", flag, s), -1;
    if (!(a > 0) || !isfinite(b)) return snprintf(why, len, "%s %s: rates are positive numbers", flag, s), -1;
    if (!(b > a)) return snprintf(why, len, "%s %s: LO must be below HI", flag, s), -1;
    if (n < 2 || n > max) return snprintf(why, len, "%s %s: N must be 2 to %d", flag, s, max), -1;
    for (int i = 0; i < n; i++) out[i] = exp2(log2(a) + (log2(b) - log2(a)) * i / (n - 1));
    return n;
  }
  int n = 0;
  for (const char *p = s; *p;) {
    char *end;
    double v = strtod(p, &end);
    int w = (int)strcspn(p, ",");
    if (end == p || (*end && *end != ',') || !(v > 0) || !isfinite(v))
      return snprintf(why, len, "%s: '%.*s' is not a positive number", flag, w, p), -1;
    if (!rates && (v != floor(v) || v >= 2147483648.0))
      return snprintf(why, len, "%s: '%.*s' is not a whole size below 2^31", flag, w, p), -1;
    for (int k = 0; k < n; k++)
      if (out[k] == v) return snprintf(why, len, "%s: %.*s is given twice", flag, w, p), -1;
    if (n == max) return snprintf(why, len, "%s: more than %d values", flag, max), -1;
    out[n++] = v;
    p = *end ? end + 1 : end;
  }
  if (!n) snprintf(why, len, "%s needs values such as %s", flag, rates ? "1e-4,1e-3,1e-2 or a range LO:HI:N" : "64,128,256");
  return n ? n : -1;
}

/* The training of one run; its final loss (the mean of the last fifth of
   its steps' losses), NaN where it diverged or failed. */
typedef struct Acc { double sum; int64_t n, from; } Acc;
static void acc_log(const TrainLog *l, void *ud) {
  Acc *a = ud;
  if (l->step > a->from) a->sum += l->loss, a->n++;
}

/* --width D=8,F=12: the swept symbol D (base 8) and the others, each
   scaled with it (F = 12·w/8 at width w), so that the whole model grows */
static struct { char sym[64]; int64_t base; } also[8];
static int nalso;
static int64_t wbase;
static char wnames[256]; /* "D,F": the symbols without bases (--param sp with Muon) */

/* the base of a --width symbol, BASE in SYM=BASE up to the next comma: -1
   unless a positive whole size */
static int64_t width_base(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  return end != s && v > 0 && (!*end || *end == ',') ? (int64_t)v : -1;
}

/* dry: only set the run up (the data read), 0 when that works. */

static double one_run(Opts *o, Run *r, bool dry) {
  r->failed = true; /* until a training ends (an error longjmps past the end) */
  Opts ro = *o; /* its --width and --depth are the derived runs' */
  ro.nsizes = 0;
  for (int i = 0; i < o->nsizes && ro.nsizes < 62; i++) {
    bool swept = !strcmp(o->sizes[i].name, o->sweep_width);
    for (int k = 0; k < nalso; k++) swept |= !strcmp(o->sizes[i].name, also[k].sym);
    if (!swept) ro.sizes[ro.nsizes++] = o->sizes[i]; /* the sweep sets the width symbols */
  }
  ro.sizes[ro.nsizes++] = (SizeArg){o->sweep_width, r->width, false};
  for (int i = 0; i < nalso && ro.nsizes < 63; i++)
    ro.sizes[ro.nsizes++] = (SizeArg){also[i].sym, also[i].base * r->width / wbase, false};
  if (o->sweep_depth) ro.sizes[ro.nsizes++] = (SizeArg){o->sweep_depth, r->depth, false};
  ro.param_derived = r->param == 1;
  if (!ro.param_derived) {
    ro.width_spec = o->optimizer && !strcmp(o->optimizer, "muon") ? wnames : NULL;
    ro.depth_spec = NULL;
  }
  ro.lr = r->lr;
  ro.seed = r->seed;
  HpOpts ho;
  Session s;
  session_open(&s);
  volatile double loss = NAN; /* read after a longjmp from an error */
  Graph *g = NULL;
  TrainData data = {0};
  unsigned char *text = NULL;
  if (hparams_setup(&s, &ro, &ho, &g) != EXIT_OK) goto done;
  if (setjmp(s.jb)) goto done;
  grad_need_loss(g);
  if (!train_load_data(&ro, g, &data, &text)) goto done;
  if (dry) {
    r->failed = false;
    loss = 0;
    goto done;
  }
  HpPlan pl = hp_derive(g, &ho);
  if (!pl.n || !train_lr_mults_apply(&ro, &pl)) {
    if (!pl.n) fprintf(stderr, "tilesmith: error: %s\n", pl.why);
    free(pl.params);
    goto done;
  }
  TrainOpts to;
  train_opts(&ro, &to);
  to.log_every = 1;
  to.init_dir = to.save_dir = NULL;
  Node *watch[SWEEP_WATCH];
  r->nwatch = 0;
  if (o->coord_lr > 0) { /* the forward products, in graph order */
    for (int i = 0; i < g->nnodes && r->nwatch < SWEEP_WATCH; i++)
      if (g->nodes[i]->op == OP_MATMUL) r->line[r->nwatch] = (int)g->nodes[i]->pos.line, watch[r->nwatch++] = g->nodes[i];
    to.watch = watch, to.nwatch = r->nwatch, to.on_watch = on_watch, to.watch_ud = r;
  }
  Acc a = {0, 0, to.steps - (to.steps + 4) / 5};
  char why[200];
  bool diverged;
  double last = train_run(g, &pl, &data, &to, acc_log, &a, why, sizeof why, &diverged);
  loss = isfinite(last) && a.n ? a.sum / (double)a.n : NAN;
  if (why[0] && !diverged) fprintf(stderr, "tilesmith: error: %s\n", why); /* a setup error: the run failed */
  else r->failed = false;
  free(pl.params);
done:
  free(text);
  for (int i = 0; i < data.narrays; i++) tensor_free(data.arrays[i].rows);
  hparams_free(&ho);
  session_close(&s);
  return loss;
}

/* --width and --depth name Nat parameters of the entry: said as those
   options (each run binds them as sizes, whose own message names --size) */
static int sweep_syms_check(Opts *o) {
  Session s;
  session_open(&s);
  bool ok = load(&s, o->file);
  if (ok) {
    SizeArg have[64];
    int nhave = entry_bindings(&s, o, have, 64);
    ok = nat_named(have, nhave, o->sweep_width, "--width", o->entry) &&
         (!o->sweep_depth || nat_named(have, nhave, o->sweep_depth, "--depth", o->entry));
  }
  session_close(&s);
  return ok ? EXIT_OK : EXIT_USER;
}

static const char *param_name(int p) { return p ? "derived" : "sp"; }

/* Everything besides the grid that decides a training's loss, as a 64-bit
   FNV-1a fingerprint written beside each row: a sweep resumes only from
   rows trained the same way (a different --steps, optimizer or corpus is
   another experiment, not finished points of this one). */
static uint64_t fnv(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull; /* a separator: "ab","c" differs from "a","bc" */
}

static uint64_t settings_key(const Opts *o) {
  char num[512];
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, o->file), h = fnv(h, o->entry);
  for (int i = 0; i < o->nsizes; i++) {
    snprintf(num, sizeof num, "%s=%lld", o->sizes[i].name, (long long)o->sizes[i].value);
    h = fnv(h, num);
  }
  for (int i = 0; i < o->nins; i++) h = fnv(h, o->ins[i].name), h = fnv(h, o->ins[i].path);
  h = fnv(h, o->text), h = fnv(h, o->optimizer), h = fnv(h, o->lr_schedule), h = fnv(h, o->width_spec);
  h = fnv(h, o->depth_spec), h = fnv(h, o->init_dir);
  for (int k = 0; k < o->nlr_mults; k++) { /* none: the key of the sweeps before --lr-mult */
    const struct LrMult *l = &o->lr_mults[k];
    snprintf(num, sizeof num, "%s=%.17g%c%.17g", l->name, l->factor, l->base ? l->base : '-', l->power);
    h = fnv(h, num);
  }
  snprintf(num, sizeof num, "%lld %lld %lld %.17g %.17g %.17g %.17g %d", (long long)o->steps, (long long)o->batch,
           (long long)o->warmup, o->lr_adam, o->wd, o->clip, o->has_alpha ? o->alpha : 1, (int)o->exec_f64);
  return fnv(h, num);
}

/* A draw of the seeds with replacement (the bootstrap below): times[k] is
   how often the k-th distinct seed counts in a curve's mean; NULL in
   curve() and optimum() counts every seed once. */
typedef struct SeedDraw {
  int n;
  uint64_t seed[SWEEP_MAX];
  int times[SWEEP_MAX];
} SeedDraw;

static int seed_times(const SeedDraw *sd, uint64_t seed) {
  if (!sd) return 1;
  for (int k = 0; k < sd->n; k++)
    if (sd->seed[k] == seed) return sd->times[k];
  return 0;
}

static int curve(const Run *runs, int n, int param, int64_t w, int64_t d, const SeedDraw *sd, double *x, double *y);

/* The vertex of the parabola through the best point and its two
   neighbours in log2(lr); the best point itself at an end of the grid or
   where the three points are level. */
static double optimum(const Run *runs, int n, int param, int64_t w, int64_t d, const SeedDraw *sd,
                      double *best_loss, bool *edge) {
  double x[SWEEP_MAX], y[SWEEP_MAX];
  int m = curve(runs, n, param, w, d, sd, x, y);
  if (!m) return NAN;
  for (int k = 0; k < m; k++) x[k] = log2(x[k]);
  int b = 0;
  for (int k = 1; k < m; k++)
    if (y[k] < y[b]) b = k;
  *best_loss = y[b];
  *edge = m > 1 && (b == 0 || b == m - 1);
  if (b == 0 || b == m - 1) return exp2(x[b]);
  /* the parabola through the best point and its two neighbours */
  double x0 = x[b - 1], x1 = x[b], x2 = x[b + 1], y0 = y[b - 1], y1 = y[b], y2 = y[b + 1];
  double c2 = ((y2 - y1) / (x2 - x1) - (y1 - y0) / (x1 - x0)) / (x2 - x0);
  if (!(c2 > 0)) return exp2(x1);
  double v = x1 - 0.5 * ((x1 - x0) * (x1 - x0) * (y1 - y2) - (x1 - x2) * (x1 - x2) * (y1 - y0)) /
                      ((x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0));
  return exp2(v < x0 ? x0 : v > x2 ? x2 : v);
}

/* How far the optimum moves over the sweep's cells (its widths and
   depths): max - min of log2 of the optimum over the cells that have one;
   NAN with fewer than two. */
static double optimum_move(const Run *runs, int n, int param, const double *wv, int nw, const double *dv, int nd,
                           const SeedDraw *sd) {
  double lo = INFINITY, hi = -INFINITY;
  int cells = 0;
  for (int d = 0; d < nd; d++)
    for (int w = 0; w < nw; w++) {
      double l;
      bool edge;
      double v = optimum(runs, n, param, (int64_t)wv[w], (int64_t)dv[d], sd, &l, &edge);
      if (isnan(v)) continue;
      cells++;
      lo = fmin(lo, log2(v)), hi = fmax(hi, log2(v));
    }
  return cells >= 2 ? hi - lo : NAN;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The move's spread over the seeds (a bootstrap): SWEEP_DRAWS draws of the
   seeds with replacement, each seed keeping its runs at every rate, width
   and depth (a seed's runs share their data order and draws), a fixed
   generator so the interval is the same on every reading; the 5th and
   95th percentiles of the move.  False with fewer than two seeds. */
#define SWEEP_DRAWS 2000
static bool move_interval(const Run *runs, int n, int param, const double *wv, int nw, const double *dv, int nd,
                          double *lo, double *hi, int *nseeds) {
  SeedDraw sd = {0};
  for (int i = 0; i < n; i++) {
    bool have = false;
    for (int k = 0; k < sd.n; k++) have |= sd.seed[k] == runs[i].seed;
    if (!have && runs[i].done && sd.n < SWEEP_MAX) sd.seed[sd.n++] = runs[i].seed;
  }
  *nseeds = sd.n;
  if (sd.n < 2) return false;
  double *mv = malloc(sizeof(double) * SWEEP_DRAWS);
  int m = 0;
  Rng rng;
  rng_seed(&rng, 0x5eed5);
  for (int b = 0; b < SWEEP_DRAWS; b++) {
    memset(sd.times, 0, sizeof sd.times);
    for (int k = 0; k < sd.n; k++) sd.times[rng_below(&rng, sd.n)]++;
    double v = optimum_move(runs, n, param, wv, nw, dv, nd, &sd);
    if (!isnan(v)) mv[m++] = v;
  }
  if (m) {
    qsort(mv, (size_t)m, sizeof *mv, cmp_double);
    *lo = mv[(int)(0.05 * (m - 1) + 0.5)], *hi = mv[(int)(0.95 * (m - 1) + 0.5)];
  }
  free(mv);
  return m > 0;
}

/* The points of one curve, sorted by learning rate, seeds averaged (each
   counted as often as the draw sd says). */
static int curve(const Run *runs, int n, int param, int64_t w, int64_t d, const SeedDraw *sd, double *x, double *y) {
  int m = 0, cnt[SWEEP_MAX] = {0};
  for (int i = 0; i < n; i++) {
    const Run *r = &runs[i];
    int t = seed_times(sd, r->seed);
    if (r->param != param || r->width != w || r->depth != d || !r->done || !isfinite(r->loss) || !t) continue;
    int at = -1;
    for (int k = 0; k < m; k++)
      if (fabs(x[k] / r->lr - 1) < 1e-9) at = k;
    if (at < 0 && m < SWEEP_MAX) x[m] = r->lr, y[m] = 0, at = m++;
    if (at >= 0) y[at] += t * r->loss, cnt[at] += t;
  }
  for (int k = 0; k < m; k++) y[k] /= cnt[k];
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && x[j] < x[j - 1]; j--) {
      double t = x[j]; x[j] = x[j - 1]; x[j - 1] = t;
      t = y[j]; y[j] = y[j - 1]; y[j - 1] = t;
    }
  return m;
}

/* A gnuplot process drawing two panels side by side into png, log-log
   axes (x in base 2), and its end: whether it drew (said on the terminal
   either way). */
static FILE *plot_open(const char *png, const char *xlabel, const char *ylabel, const char *key, int panels) {
  FILE *g = popen("gnuplot", "w");
  if (g)
    fprintf(g, "set terminal pngcairo size %d,480 noenhanced\nset output '%s'\nset multiplot layout 1,%d\n"
               "set logscale x 2\nset logscale y\nset xlabel '%s'\nset ylabel '%s'\nset key %s\nset grid\n",
            600 * panels, png, panels, xlabel, ylabel, key);
  return g;
}
static void plot_close(FILE *g, const char *png) {
  bool ok = false;
  if (g) {
    fprintf(g, "unset multiplot\n");
    ok = pclose(g) == 0;
  }
  if (ok) printf("wrote %s\n", png);
  else fprintf(stderr, "tilesmith: warning: gnuplot could not draw %s (is gnuplot installed?)\n", png);
}

/* Loss against learning rate, one curve per width and depth, standard
   beside derived: a gnuplot script with the points inline. */
static void plot(const char *png, const Run *runs, int n, const int64_t *widths, int nw, const int64_t *depths, int nd,
                 int only, double alpha) {
  FILE *g = plot_open(png, "learning rate", "final training loss", "top right", only >= 0 ? 1 : 2);
  if (!g) {
    plot_close(g, png);
    return;
  }
  fprintf(g, "set format x '%%.0e'\n");
  /* one loss range for both panels, fitted to the curves (a log axis
     rounded out to whole decades flattens losses that differ in the second
     digit); linear unless the losses span more than a factor of 10 */
  double lo = INFINITY, hi = -INFINITY;
  for (int p = 0; p < 2; p++)
    for (int d = 0; d < nd; d++)
      for (int i = 0; i < nw; i++) {
        double x[SWEEP_MAX], y[SWEEP_MAX];
        int m = only >= 0 && p != only ? 0 : curve(runs, n, p, widths[i], depths[d], NULL, x, y);
        for (int k = 0; k < m; k++) lo = fmin(lo, y[k]), hi = fmax(hi, y[k]);
      }
  if (lo > 0 && hi > lo && hi / lo <= 10) {
    double pad = 0.05 * (hi - lo);
    fprintf(g, "unset logscale y\nset yrange [%.9g:%.9g]\n", lo - pad, hi + pad);
  } else if (lo > 0 && hi > lo) {
    fprintf(g, "set yrange [%.9g:%.9g]\n", lo / 1.1, hi * 1.1);
  }
  for (int p = 0; p < 2; p++) {
    if (only >= 0 && p != only) continue; /* --param: that panel only */
    fprintf(g, "set title '%s'\nplot ",
            !p ? "standard parametrization"
               : nd < 2 ? "derived parametrization (muP)"
               : alpha == 1 ? "derived parametrization (muP, CompleteP alpha 1)" : "derived parametrization (muP, depth-muP alpha 1/2)");
    for (int d = 0; d < nd; d++)
      for (int i = 0; i < nw; i++) {
        char t[64] = "";
        if (nw > 1 || nd == 1) snprintf(t, sizeof t, "width %lld", (long long)widths[i]);
        if (nd > 1) snprintf(t + strlen(t), sizeof t - strlen(t), "%sdepth %lld", t[0] ? ", " : "", (long long)depths[d]);
        fprintf(g, "%s'-' with linespoints lw 2 title '%s'", d || i ? ", " : "", t);
      }
    fprintf(g, "\n");
    for (int d = 0; d < nd; d++)
      for (int i = 0; i < nw; i++) {
        double x[SWEEP_MAX], y[SWEEP_MAX];
        int m = curve(runs, n, p, widths[i], depths[d], NULL, x, y);
        for (int k = 0; k < m; k++) fprintf(g, "%.9g %.9g\n", x[k], y[k]);
        fprintf(g, "e\n");
      }
  }
  plot_close(g, png);
}

/* The coordinate check's table and picture: each product's output RMS at
   the last step against the width (seeds averaged), standard beside
   derived.  Under the derived parametrization the curves stay flat; under
   the standard one the products past the first grow with the width. */
static int coord_report(const Opts *o, const Run *runs, int n, const int64_t *widths, int nw, int64_t depth) {
  int np = 0;
  for (int i = 0; i < n; i++)
    if (runs[i].nwatch > np) np = runs[i].nwatch;
  double v[2][SWEEP_WATCH][SWEEP_MAX] = {{{0}}};
  int line[SWEEP_WATCH] = {0};
  for (int p = 0; p < 2; p++)
    for (int w = 0; w < nw; w++)
      for (int k = 0; k < np; k++) {
        double s = 0;
        int c = 0;
        for (int i = 0; i < n; i++)
          if (runs[i].param == p && runs[i].width == widths[w] && runs[i].depth == depth && k < runs[i].nwatch &&
              isfinite(runs[i].rms1[k]))
            s += runs[i].rms1[k], c++, line[k] = runs[i].line[k];
        v[p][k][w] = c ? s / c : NAN;
      }
  printf("\ncoordinate check: each product's output RMS after %lld steps at lr %g, by width\n",
         (long long)(o->steps ? o->steps : 100), o->coord_lr);
  for (int p = 0; p < 2; p++) {
    printf("%s:\n  %-14s", p ? "derived" : "standard", "product (line)");
    for (int w = 0; w < nw; w++) printf(" %10lld", (long long)widths[w]);
    printf("   last/first width\n");
    for (int k = 0; k < np; k++) {
      printf("  %-3d (line %4d)", k, line[k]);
      for (int w = 0; w < nw; w++) printf(" %10.4g", v[p][k][w]);
      printf("   %.3g\n", v[p][k][nw - 1] / v[p][k][0]);
    }
  }
  if (o->plot) {
    FILE *g = plot_open(o->plot, "width", "RMS of the product output", "top left", 2);
    for (int p = 0; g && p < 2; p++) {
      fprintf(g, "set title '%s, after %lld steps'\nplot ", p ? "derived parametrization" : "standard parametrization",
              (long long)(o->steps ? o->steps : 100));
      for (int k = 0; k < np; k++) fprintf(g, "%s'-' with linespoints title 'product %d (line %d)'", k ? ", " : "", k, line[k]);
      fprintf(g, "\n");
      for (int k = 0; k < np; k++) {
        for (int w = 0; w < nw; w++)
          if (isfinite(v[p][k][w])) fprintf(g, "%lld %.9g\n", (long long)widths[w], v[p][k][w]);
        fprintf(g, "e\n");
      }
    }
    plot_close(g, o->plot);
  }
  return EXIT_OK;
}

/* Trainings an error stopped, said last (their errors are above, among
   the progress lines); true if any. */
static bool sweep_failures(int nfailed, int ran, const char *csv) {
  if (!nfailed) return false;
  fflush(stdout);
  fprintf(stderr, "tilesmith: error: %d of the %d trainings failed (their errors are above): the results leave them out",
          nfailed, ran);
  if (csv) fprintf(stderr, ", %s has no rows for them, and the sweep run again trains them again", csv);
  fprintf(stderr, "\n");
  return true;
}

int cmd_sweep(Opts *o) {
  double wv[SWEEP_MAX], dv[SWEEP_MAX], lrv[SWEEP_MAX];
  char why[200];
  int nw = parse_list("--widths", o->sweep_widths ? o->sweep_widths : "", wv, SWEEP_MAX, false, why, sizeof why);
  if (nw < 0) return usage_error("%s", why);
  int nd = o->sweep_depths ? parse_list("--depths", o->sweep_depths, dv, SWEEP_MAX, false, why, sizeof why) : 1;
  if (nd < 0) return usage_error("%s", why);
  int nl = 1;
  if (o->coord_lr > 0) lrv[0] = o->coord_lr;
  else if ((nl = parse_list("--lrs", o->sweep_lrs ? o->sweep_lrs : "", lrv, SWEEP_MAX, true, why, sizeof why)) < 0)
    return usage_error("%s", why);
  else if (nl < 2)
    return usage_error("--lrs %s: at least two learning rates (the optimum is a parabola through the best and its "
                       "neighbours)", o->sweep_lrs);
  int bad = train_opts_check(o);
  if (bad != EXIT_OK) return bad;
  if (o->param_given && o->coord_lr > 0) return usage_error("--coord compares both parametrizations: leave out --param");
  for (int k = 0; k < o->nlr_mults; k++)
    if (o->lr_mults[k].base && !(o->param_given && o->param_derived))
      return usage_error("--lr-mult %s=%s^E scales with the derived plan's bases: add --param derived", o->lr_mults[k].name,
                         o->lr_mults[k].base == 'd' ? "depth" : "width");
  if (!o->width_spec || !strchr(o->width_spec, '='))
    return usage_error("--width SYM=BASE is required (the base of the derived parametrization)");
  static char wsym[64], dsym[64];
  snprintf(wsym, sizeof wsym, "%.*s", (int)strcspn(o->width_spec, "=,"), o->width_spec);
  o->sweep_width = wsym;
  wbase = width_base(o->width_spec + strlen(wsym) + 1);
  if (wbase <= 0) return usage_error("--width %s: %s's base must be a positive size (%s=64)", o->width_spec, wsym, wsym);
  snprintf(wnames, sizeof wnames, "%s", wsym);
  nalso = 0;
  for (const char *c = strchr(o->width_spec, ','); c; c = strchr(c + 1, ',')) {
    size_t len = strcspn(c + 1, "=,");
    if (nalso == 8) return usage_error("--width: at most 9 symbols");
    snprintf(also[nalso].sym, sizeof also[nalso].sym, "%.*s", (int)len, c + 1);
    if (c[1 + len] != '=')
      return usage_error("--width %s: give %s's base too (%s=N): a sweep scales it with %s", o->width_spec,
                         also[nalso].sym, also[nalso].sym, wsym);
    also[nalso].base = width_base(c + 2 + len);
    if (also[nalso].base <= 0)
      return usage_error("--width %s: %s's base must be a positive size", o->width_spec, also[nalso].sym);
    size_t at = strlen(wnames);
    snprintf(wnames + at, sizeof wnames - at, ",%s", also[nalso].sym);
    for (int w = 0; w < nw; w++)
      if ((also[nalso].base * (int64_t)wv[w]) % wbase)
        return usage_error("--width %s: at width %lld, %s = %lld·%lld/%lld is not a whole size", o->width_spec,
                           (long long)wv[w], also[nalso].sym, (long long)also[nalso].base, (long long)wv[w],
                           (long long)wbase);
    nalso++;
  }
  if (o->depth_spec) {
    snprintf(dsym, sizeof dsym, "%.*s", (int)strcspn(o->depth_spec, "=,"), o->depth_spec);
    o->sweep_depth = dsym;
    if (!o->sweep_depths) return usage_error("--depth needs --depths (the depths to sweep)");
  } else if (o->sweep_depths) {
    return usage_error("--depths needs --depth SYM=BASE");
  }
  if (!o->out) return usage_error("--csv OUT.csv is required (the sweep's rows, and where it resumes from)");
  int seeds = o->sweep_seeds ? o->sweep_seeds : 1, jobs = o->jobs ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  if (!o->sweep_depths) dv[0] = 0;
  int64_t widths[SWEEP_MAX];
  for (int i = 0; i < nw; i++) widths[i] = (int64_t)wv[i];
  int total = 2 * nw * nd * nl * seeds;
  Run *runs = calloc((size_t)total, sizeof *runs);
  int n = 0;
  for (int p = 0; p < 2; p++)
    for (int d = 0; d < nd && (!o->param_given || p == (int)o->param_derived); d++) /* --param: that one only */
      for (int w = 0; w < nw; w++)
        for (int l = 0; l < nl; l++)
          for (int s = 0; s < seeds; s++)
            runs[n++] = (Run){p, (int64_t)wv[w], (int64_t)dv[d], lrv[l], o->seed + (uint64_t)s, NAN, false};
  /* the first run's setup here, so that bad data is one error, not one per run */
  if (sweep_syms_check(o) != EXIT_OK || !isfinite(one_run(o, &runs[0], true))) {
    free(runs);
    return EXIT_USER;
  }
  /* resume: rows already in the CSV, trained with these settings.  A file
     that is not a sweep's is refused, never overwritten; one of other
     settings too; an old one without the settings column is read as it is
     (said); a row cut off by an interrupted write is skipped and the next
     one starts on a line of its own. */
  static const char *head6 = "param,width,depth,lr,seed,loss", *head7 = "param,width,depth,lr,seed,loss,settings";
  uint64_t key = settings_key(o);
  FILE *f = o->coord_lr > 0 ? NULL : fopen(o->out, "r"); /* a coordinate check is run whole */
  int resumed = 0, other = 0;
  bool has_rows = false, ends_nl = true, legacy = false;
  if (f) {
    char line[512];
    for (int ln = 0; fgets(line, sizeof line, f); ln++) {
      size_t len = strlen(line);
      ends_nl = len && line[len - 1] == '\n';
      line[strcspn(line, "\r\n")] = 0;
      if (ln == 0) {
        if (!line[0]) continue;
        legacy = !strcmp(line, head6);
        if (!legacy && strcmp(line, head7)) {
          fprintf(stderr, "tilesmith: error: %s is not a sweep's CSV (its first line is '%.60s'); give --csv a new file\n",
                  o->out, line);
          fclose(f);
          free(runs);
          return EXIT_USER;
        }
        if (legacy)
          fprintf(stderr, "tilesmith: warning: %s does not record its trainings' settings (an older sweep's): its rows "
                          "are taken as trained like this sweep\n", o->out);
        has_rows = true;
        continue;
      }
      int p, at = 0;
      long long w, d;
      double lr, loss;
      unsigned long long sd, k = key;
      if (sscanf(line, "%d,%lld,%lld,%lf,%llu,%lf%n", &p, &w, &d, &lr, &sd, &loss, &at) != 6) continue;
      if (!legacy && (sscanf(line + at, ",%16llx", &k) != 1 || strlen(line + at) != 17)) continue; /* cut off */
      if (k != key) {
        other++;
        continue;
      }
      for (int i = 0; i < n; i++)
        if (!runs[i].done && runs[i].param == p && runs[i].width == w && runs[i].depth == d &&
            fabs(runs[i].lr / lr - 1) < 1e-6 && runs[i].seed == sd)
          runs[i].loss = loss, runs[i].done = true, resumed++;
    }
    fclose(f);
    if (other) {
      fprintf(stderr, "tilesmith: error: %s holds %d result%s trained with other settings (steps, optimizer, data, "
                      "sizes or schedule differ from this sweep's); give --csv a new file\n", o->out, other,
              other == 1 ? "" : "s");
      free(runs);
      return EXIT_USER;
    }
  }
  f = fopen(o->out, has_rows ? "a" : "w");
  if (!f) {
    fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", o->out, strerror(errno));
    free(runs);
    return EXIT_USER;
  }
  if (!has_rows)
    fprintf(f, "%s\n", o->coord_lr > 0 ? "param,width,depth,lr,seed,product,line,rms_init,rms_last" : head7);
  else if (!ends_nl)
    fputc('\n', f); /* after a row cut off */
  fflush(f);
  printf("sweep %s: %d trainings (%d widths x %d depths x %d learning rates x %d seeds x %s), "
         "%d already in %s, %d at a time\n", o->entry, n, nw, nd, nl, seeds,
         !o->param_given ? "2 parametrizations" : o->param_derived ? "the derived parametrization only" : "the standard parametrization only",
         resumed, o->out, jobs);
  fflush(stdout);
  /* a pool of child processes, each one training, its loss through a pipe */
  struct { pid_t pid; int fd, run; } slot[SWEEP_MAX];
  int active = 0, next = 0, finished = resumed, nfailed = 0;
  for (;;) {
    while (active < jobs && active < SWEEP_MAX) {
      while (next < n && runs[next].done) next++;
      if (next >= n) break;
      int fds[2];
      if (pipe(fds)) break;
      fflush(stdout);
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        if (!freopen("/dev/null", "w", stdout)) _exit(1);
        train_set_threads((int)sysconf(_SC_NPROCESSORS_ONLN) / jobs); /* the cores shared among the children */
        Run *r = &runs[next];
        r->loss = one_run(o, r, false);
        ssize_t wr = write(fds[1], r, sizeof *r); /* the whole record: loss and watched RMS */
        _exit(wr == (ssize_t)sizeof *r ? 0 : 1);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        break;
      }
      slot[active].pid = pid, slot[active].fd = fds[0], slot[active].run = next++;
      active++;
    }
    if (!active) break;
    int st;
    pid_t done = wait(&st);
    for (int i = 0; i < active; i++) {
      if (slot[i].pid != done) continue;
      Run *r = &runs[slot[i].run], got;
      size_t have = 0;
      for (ssize_t k; have < sizeof got && (k = read(slot[i].fd, (char *)&got + have, sizeof got - have)) > 0;) have += (size_t)k;
      close(slot[i].fd);
      if (have == sizeof got) *r = got;
      else r->loss = NAN, r->nwatch = 0, r->failed = true;
      r->done = true;
      finished++;
      char dep[32] = "";
      if (o->sweep_depths) snprintf(dep, sizeof dep, " depth %lld", (long long)r->depth);
      char said[64];
      if (r->failed) { /* its error is on stderr above; no row, so a resumed sweep trains it again */
        r->loss = NAN, r->nwatch = 0; /* nor a coordinate check's row */
        nfailed++;
        snprintf(said, sizeof said, "failed (the error above)");
      } else {
        if (o->coord_lr > 0)
          for (int k = 0; k < r->nwatch; k++)
            fprintf(f, "%d,%lld,%lld,%.9g,%llu,%d,%d,%.9g,%.9g\n", r->param, (long long)r->width, (long long)r->depth,
                    r->lr, (unsigned long long)r->seed, k, r->line[k], r->rms0[k], r->rms1[k]);
        else
          fprintf(f, legacy ? "%d,%lld,%lld,%.9g,%llu,%.9g\n" : "%d,%lld,%lld,%.9g,%llu,%.9g,%016llx\n", r->param,
                  (long long)r->width, (long long)r->depth, r->lr, (unsigned long long)r->seed, r->loss,
                  (unsigned long long)key); /* an older sweep's file keeps its columns */
        fflush(f);
        snprintf(said, sizeof said, "loss %.5f", r->loss);
      }
      printf("[%d/%d] %-7s width %lld%s lr %.3g seed %llu: %s\n", finished, n, param_name(r->param), (long long)r->width,
             dep, r->lr, (unsigned long long)r->seed, said);
      fflush(stdout);
      slot[i] = slot[--active];
      break;
    }
  }
  fclose(f);
  if (o->coord_lr > 0) {
    int rc = coord_report(o, runs, n, widths, nw, (int64_t)dv[0]);
    free(runs);
    return sweep_failures(nfailed, n - resumed, NULL) ? EXIT_USER : rc;
  }
  printf("\noptimal learning rate (vertex of a parabola in log2 lr over the best point and its neighbours):\n");
  printf("%-8s %8s", "width", "depth");
  printf("  %-22s %-22s\n", "standard: lr (loss)", "derived: lr (loss)");
  bool any_edge = false;
  for (int d = 0; d < nd; d++)
    for (int w = 0; w < nw; w++) {
      double l0 = NAN, l1 = NAN;
      bool e0 = false, e1 = false;
      double a = optimum(runs, n, 0, (int64_t)wv[w], (int64_t)dv[d], NULL, &l0, &e0),
             b = optimum(runs, n, 1, (int64_t)wv[w], (int64_t)dv[d], NULL, &l1, &e1);
      char dep[24] = "-"; /* no depth symbol */
      if (o->sweep_depths) snprintf(dep, sizeof dep, "%lld", (long long)dv[d]);
      char col[2][40];
      for (int p = 0; p < 2; p++) { /* "-" for a parametrization --param left out */
        double v = p ? b : a, l = p ? l1 : l0;
        if (isnan(v)) snprintf(col[p], sizeof col[p], "%-22s", "-");
        else snprintf(col[p], sizeof col[p], "%-9.3g%s(%-9.4g)", v, (p ? e1 : e0) ? "*" : " ", l);
      }
      printf("%-8lld %8s  %s    %s\n", (long long)wv[w], dep, col[0], col[1]);
      any_edge |= e0 || e1;
    }
  char said[2][64] = {"", ""};
  int nseeds = 0;
  for (int p = 0; p < 2; p++) {
    double mv = optimum_move(runs, n, p, wv, nw, dv, nd, NULL), lo, hi;
    if (isnan(mv)) continue;
    int at = snprintf(said[p], sizeof said[p], "%s %.2f", p ? "derived" : "standard", mv);
    if (move_interval(runs, n, p, wv, nw, dv, nd, &lo, &hi, &nseeds))
      snprintf(said[p] + at, sizeof said[p] - (size_t)at, " (%.2f to %.2f)", lo, hi);
  }
  if (*said[0] || *said[1]) {
    printf("\nthe optimum moves over the %s (max - min of log2 lr): %s%s%s\n", nw > 1 ? "widths" : "depths",
           said[0], *said[0] && *said[1] ? ", " : "", said[1]);
    if (nseeds >= 2)
      printf("  (in brackets: its 5th and 95th percentiles over %d draws of the %d seeds with replacement)\n",
             SWEEP_DRAWS, nseeds);
  }
  if (any_edge)
    printf("* the best learning rate is the grid's first or last: the optimum may lie beyond it (widen --lrs;\n"
           "  a resumed sweep trains only the new points when the old ones stay on the grid)\n");
  if (o->plot) {
    int64_t depths[SWEEP_MAX];
    for (int d = 0; d < nd; d++) depths[d] = (int64_t)dv[d];
    plot(o->plot, runs, n, widths, nw, depths, nd, o->param_given ? (int)o->param_derived : -1,
         o->has_alpha ? o->alpha : 1);
  }
  free(runs);
  return sweep_failures(nfailed, n - resumed, o->out) ? EXIT_USER : EXIT_OK;
}
