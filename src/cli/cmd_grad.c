/*
 * cmd_grad.c: `tilesmith grad`, the gradient of a loss with respect to
 * every Param, as a graph of primitives (src/grad), optionally checked
 * against central differences in float64.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../grad/grad.h"
#include "cli.h"

#define GRAD_SAMPLES 24   /* elements of each Param --check moves */
#define GRAD_TOL 1e-6     /* --check's bound on the mixed relative error */

int cmd_grad(Opts *o) {
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Graph *g = load(&s, o->file) ? elaborate(&s, o, o->entry) : NULL;
  Tensor **inputs = NULL;
  double *err = NULL, *beyond = NULL;
  int64_t *checked = NULL;
  if (!g) goto done;
  if (setjmp(s.jb)) goto done;
  int nfwd = g->nnodes;
  Grads gr = grad_build(g);
  if (!gr.n) {
    fprintf(stderr, "tilesmith: error: '%s' has no Param inputs: nothing to differentiate\n", o->entry);
    goto done;
  }
  char sh[256];
  if (!o->check && !o->out) {
    graph_print_text(stdout, g);
    for (int k = 0; k < gr.n; k++)
      printf("  gradient %s : %s = %%%d\n", gr.param[k]->name, shape_str(&gr.param[k]->shape, sh, sizeof sh),
             gr.grad[k]->id);
    printf("# %d nodes of the loss, %d of its gradients\n", nfwd, g->nnodes - nfwd);
    rc = EXIT_OK;
    goto done;
  }
  inputs = calloc((size_t)g->ninputs + 1, sizeof *inputs);
  if (!inputs) goto done;
  if (o->out) {
    if (!read_inputs(o, g, inputs)) goto done;
    interp_random_inputs(g, inputs, o->seed, false);
    if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
      fprintf(stderr, "tilesmith: error: cannot make the directory %s: %s\n", o->out, strerror(errno));
      goto done;
    }
    for (int k = 0; k < gr.n; k++) {
      Tensor *t = interp_run_ex(g, inputs, NULL, gr.grad[k], NULL, NULL);
      char path[4096], e[512];
      snprintf(path, sizeof path, "%s/%s.npy", o->out, gr.param[k]->name);
      bool ok = npy_write(path, t, e, sizeof e);
      tensor_free(t);
      if (!ok) {
        fprintf(stderr, "tilesmith: error: %s\n", e);
        goto done;
      }
      printf("wrote %s: the gradient with respect to %s, float64 %s\n", path, gr.param[k]->name,
             shape_str(&gr.param[k]->shape, sh, sizeof sh));
    }
    rc = EXIT_OK;
    goto done;
  }
  err = calloc((size_t)gr.n, sizeof *err);
  checked = calloc((size_t)gr.n, sizeof *checked);
  beyond = calloc((size_t)gr.n, sizeof *beyond);
  if (!err || !checked || !beyond) goto done;
  interp_random_inputs(g, inputs, o->seed, false);
  grad_check(g, &gr, inputs, GRAD_SAMPLES, err, beyond, checked);
  rc = EXIT_OK;
  for (int k = 0; k < gr.n; k++) {
    bool ok = beyond[k] <= GRAD_TOL && err[k] == err[k]; /* a NaN gradient or difference fails */
    int64_t n = shape_numel(&gr.param[k]->shape);
    printf("%-6s %s %s: %lld of %lld elements against central differences, largest error %.2e",
           ok ? "ok" : "FAILED", gr.param[k]->name, shape_str(&gr.param[k]->shape, sh, sizeof sh),
           (long long)checked[k], (long long)n, err[k]);
    if (beyond[k] < err[k]) printf(", %.2e beyond the difference's rounding", beyond[k]);
    printf(" (bound %.0e)\n", GRAD_TOL);
    if (!ok) rc = EXIT_USER;
  }
done:
  if (inputs)
    for (int i = 0; i < g->ninputs; i++) tensor_free(inputs[i]);
  free(inputs);
  free(err);
  free(checked);
  free(beyond);
  session_close(&s);
  return rc;
}
