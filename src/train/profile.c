/*
 * profile.c: `tilesmith train --profile`, where a training step's time goes.
 *
 * The trainer measures, from the second step on, the executor's whole run,
 * the time inside sgemm with each distinct product shape and its count
 * (exec32.c), and the optimizer's updates.  To say how close the step comes
 * to what the BLAS can do on the same products, the report then replays
 * them alone: every recorded shape, as many calls as one step makes, on
 * fresh buffers of random values through the same sgemm, timed over
 * several rounds (the median).  The ratio of that time to the step's is
 * the step's throughput on its products as a fraction of sgemm's: 1 would
 * mean that everything besides the products cost nothing.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "train.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One step's products alone: the median seconds of a round (NAN when a
   buffer cannot be had). */
static double replay(const Exec32Prof *e, int64_t steps) {
  float *buf[EXEC32_MAX_GEMMS][3] = {{0}};
  double result = NAN, times[64];
  int rounds = 0;
  for (int j = 0; j < e->ngemm; j++) {
    const Exec32Gemm *s = &e->gemm[j];
    size_t sz[3] = {(size_t)s->m * (size_t)s->k, (size_t)s->k * (size_t)s->n, (size_t)s->m * (size_t)s->n};
    for (int b = 0; b < 3; b++) {
      buf[j][b] = malloc((sz[b] ? sz[b] : 1) * sizeof(float));
      if (!buf[j][b]) goto out;
      for (size_t i = 0; i < sz[b]; i++) buf[j][b][i] = (float)((i * 2654435761u % 1000) / 1000.0 - 0.5);
    }
  }
  double start = ts_seconds();
  for (int r = -1; r < 64; r++) { /* round -1 warms the caches and the threads */
    double t0 = ts_seconds();
    for (int j = 0; j < e->ngemm; j++) {
      const Exec32Gemm *s = &e->gemm[j];
      int64_t calls = (s->calls + steps / 2) / steps;
      for (int64_t c = 0; c < calls; c++)
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans, s->m, s->n,
                    s->k, 1.0f, buf[j][0], s->ta ? s->m : s->k, buf[j][1], s->tb ? s->k : s->n, 0.0f, buf[j][2], s->n);
    }
    if (r >= 0) times[rounds++] = ts_seconds() - t0;
    if (rounds >= 5 && ts_seconds() - start > 1.0) break;
  }
  qsort(times, (size_t)rounds, sizeof *times, cmp_double);
  result = times[rounds / 2];
out:
  for (int j = 0; j < e->ngemm; j++)
    for (int b = 0; b < 3; b++) free(buf[j][b]);
  return result;
}

void train_profile_print(FILE *f, const TrainProf *p) {
  if (p->steps <= 0) {
    fprintf(f, "profile: no step after the first to measure (train at least 2 steps)\n");
    return;
  }
  double n = (double)p->steps, step = (p->run_s + p->update_s) / n;
  const Exec32Prof *e = &p->exec;
  fprintf(f, "profile over %lld steps (the first left out): %.2f ms a step\n", (long long)p->steps, 1e3 * step);
  if (e->gemm_flops > 0) {
    fprintf(f, "  products (sgemm)   %8.2f ms  %.3g GFLOP a step at %.1f GFLOP/s, %d shapes\n", 1e3 * e->gemm_s / n,
            1e-9 * e->gemm_flops / n, 1e-9 * e->gemm_flops / e->gemm_s, e->ngemm);
    fprintf(f, "  other executor work %7.2f ms\n", 1e3 * (p->run_s - e->gemm_s) / n);
  } else {
    fprintf(f, "  evaluation         %8.2f ms\n", 1e3 * p->run_s / n);
  }
  fprintf(f, "  optimizer updates  %8.2f ms\n", 1e3 * p->update_s / n);
  if (e->gemm_flops > 0) {
    double alone = replay(e, p->steps);
    if (alone == alone)
      fprintf(f,
              "  the same products alone in sgemm: %.2f ms a step (%.1f GFLOP/s); the step runs its products at "
              "%.0f%% of that rate\n",
              1e3 * alone, 1e-9 * e->gemm_flops / n / alone, 100 * alone / step);
  }
}
