/* rewrite_examples.c: equality saturation end to end on every example.
 *
 * For every concrete instance of every example (examples/NAME.lean; the definitions that
 * elaborate with no --size, as `tilesmith check` lists them):
 *   1. at full size, saturate with the SAFE rules and extract with the
 *      default cost, twice: the two extracted graphs must print identically
 *      (determinism), the run must stop by saturation or the node/iteration
 *      limit, never the time limit, in well under a second; the runner's
 *      seconds, iterations, e-nodes, e-classes and stop reason are printed;
 *   2. at small sizes (the instance's Nat parameters shrunk, as verify does,
 *      so that evaluating is cheap; the e-graph does not care about sizes),
 *      saturate and extract again, by the default cost and by a cost that
 *      prefers the e-nodes rules made (so every rewrite that applied is
 *      exercised), and evaluate the original and both extracted graphs
 *      with the float64 interpreter on the same random inputs
 *      (fan-in-scaled weights: well conditioned): normwise relative
 *      difference at most 1e-9, NaN and infinities at the same places.
 * One line per instance, then "N passed, M failed".
 * usage: build/rewrite_examples [FILE.lean ...]   (default: every file in examples/)
 */
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/front/front.h"
#include "../../src/interp/interp.h"
#include "../../src/rewrite/egraph.h"

#define MAX_NATS 32

static char *graph_text(const Graph *g) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  graph_print_text(f, g);
  fclose(f);
  return buf;
}

/* The most rewritten term: e-nodes a rule made are cheap, the graph's dear
   (but for layout ops, which a rule's rhs may share with the graph). */
static double cost_rewritten(const EgTerm *t, void **summary) {
  (void)summary;
  OpClass k = op_info[t->op].cls;
  double c = k == OPC_LEAF ? 0 : t->eg->nodes[t->node].rule >= 0 || k == OPC_LAYOUT ? 1 : 1000;
  for (int i = 0; i < t->nin; i++) c += t->kid_cost[i];
  return c;
}

/* Saturate and extract (by cost; NULL: the default); NULL on an error (unwound to here). */
static Graph *rewrite(Ctx *c, Graph *g, EgCostFn cost, EgReport *rep, char *used_out, size_t ulen) {
  jmp_buf here, *prev = c->unwind;
  EGraph *volatile eg = NULL;
  Graph *volatile out = NULL;
  if (setjmp(here)) {
    c->unwind = prev;
    eg_free(eg);
    return NULL;
  }
  c->unwind = &here;
  eg = eg_from_graph(g);
  *rep = *eg_run(eg, NULL);
  const char *const *used;
  int nused;
  out = eg_extract(eg, eg_root(eg), cost, NULL, &used, &nused);
  size_t k = 0;
  if (used_out) {
    used_out[0] = 0;
    for (int i = 0; i < nused && k < ulen; i++) k += (size_t)snprintf(used_out + k, ulen - k, "%s%s", i ? " " : "", used[i]);
    if (!nused) snprintf(used_out, ulen, "none");
  }
  rep->iters = NULL; /* lives in eg */
  eg_free(eg);
  c->unwind = prev;
  return out;
}

/* Elaborate entry quietly (NULL if it does not elaborate). */
static Graph *elab_quiet(Ctx *c, const Program *prog, const char *entry, SizeArg *s, int n) {
  jmp_buf here, *prev = c->unwind;
  FILE *save = c->err;
  c->err = NULL;
  Graph *volatile g = NULL;
  if (!setjmp(here)) {
    c->unwind = &here;
    g = elab_entry(c, prog, entry, (Pos){0}, s, n);
  }
  c->unwind = prev;
  c->err = save;
  return g;
}

static double rel_diff(const Tensor *x, const Tensor *y) {
  if (!shape_equal(&x->shape, &y->shape)) return INFINITY;
  int64_t n = shape_numel(&x->shape);
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; i++) {
    double a = x->data[i], b = y->data[i];
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
      if (!(isnan(a) && isnan(b)) && a != b) return INFINITY;
      continue;
    }
    num = fmax(num, fabs(a - b));
    den = fmax(den, fabs(b));
  }
  return num / fmax(den, 1e-300);
}

/* Evaluate g and h (same inputs) on random inputs; the relative difference,
   or -1 if the interpreter failed. */
static double compare(Ctx *c, Graph *g, Graph *h, uint64_t seed) {
  Tensor **volatile in = calloc((size_t)g->ninputs + 1, sizeof(Tensor *));
  Tensor *volatile a = NULL, *volatile b = NULL;
  volatile double d = -1;
  jmp_buf here, *prev = c->unwind;
  if (!setjmp(here)) {
    c->unwind = &here;
    interp_random_inputs(g, in, seed, false);
    a = interp_run(g, in);
    b = interp_run(h, in);
    d = rel_diff(a, b);
  }
  c->unwind = prev;
  for (int i = 0; i < g->ninputs; i++) tensor_free(in[i]);
  free(in);
  tensor_free(a);
  tensor_free(b);
  return d;
}

/* The small size a Nat parameter shrinks to at a level: a chain of divisors
   (so D/H and H/Hkv stay whole), as verify's "no tails" family. */
static int64_t shrink(int level, int64_t v) {
  static const int64_t aligned[3][3] = {{2, 4, 16}, {4, 8, 32}, {2, 2, 2}};
  if (v <= 2) return v;
  return aligned[level][v <= 8 ? 0 : v <= 32 ? 1 : 2];
}

static bool one_instance(Ctx *c, const Program *prog, const char *file, const char *entry) {
  bool ok = true;
  char why[512] = "";
  /* full size: statistics and determinism */
  Arena *scratch = arena_new(), *home = c->arena;
  c->arena = scratch;
  Graph *g = elab_quiet(c, prog, entry, NULL, 0);
  EgReport r1 = {0}, r2 = {0};
  char used[1024];
  Graph *x1 = g ? rewrite(c, g, NULL, &r1, used, sizeof used) : NULL, *x2 = g ? rewrite(c, g, NULL, &r2, NULL, 0) : NULL;
  if (!x1 || !x2) {
    ok = false;
    snprintf(why, sizeof why, "saturation or extraction failed");
  } else {
    char *t1 = graph_text(x1), *t2 = graph_text(x2);
    if (strcmp(t1, t2)) ok = false, snprintf(why, sizeof why, "two runs extract different graphs");
    free(t1);
    free(t2);
    if (r1.stop == EG_TIME_LIMIT) ok = false, snprintf(why, sizeof why, "stopped by the time limit");
    if (r1.seconds > 1.0) ok = false, snprintf(why, sizeof why, "took %.2f s", r1.seconds);
    if (!graph_check(x1, stderr)) ok = false, snprintf(why, sizeof why, "the extracted graph breaks an invariant");
  }
  int nodes = g ? g->nnodes : 0;
  c->arena = home;
  arena_free(scratch);
  /* small sizes: values */
  double worst[2] = {-1, -1};
  char sizes[256] = "", rewritten[1024] = "-";
  if (ok) {
    SizeArg nats[MAX_NATS];
    volatile int nn = 0;
    jmp_buf here, *prev = c->unwind;
    if (!setjmp(here)) {
      c->unwind = &here;
      nn = elab_entry_nats(c, prog, entry, nats, MAX_NATS);
    }
    c->unwind = prev;
    bool done = false;
    for (int level = 0; level < 3 && !done; level++) {
      SizeArg s[MAX_NATS];
      size_t k = 0;
      for (int i = 0; i < nn; i++) {
        s[i] = (SizeArg){nats[i].name, nats[i].value > 0 ? shrink(level, nats[i].value) : nats[i].value, false};
        k += (size_t)snprintf(sizes + k, sizeof sizes - k, "%s%s=%lld", i ? "," : "", s[i].name, (long long)s[i].value);
      }
      scratch = arena_new();
      c->arena = scratch;
      Graph *sg = elab_quiet(c, prog, entry, s, nn);
      if (sg) {
        done = true;
        EgReport rs;
        /* the cheapest term, and the one made most of rewritten e-nodes */
        Graph *sx[2] = {rewrite(c, sg, NULL, &rs, NULL, 0), rewrite(c, sg, cost_rewritten, &rs, rewritten, sizeof rewritten)};
        for (int f = 0; f < 2 && ok; f++) {
          if (!sx[f]) {
            ok = false;
            snprintf(why, sizeof why, "saturation at %s failed", sizes);
            break;
          }
          for (uint64_t seed = 1; seed <= 2 && ok; seed++) {
            double d = compare(c, sg, sx[f], seed);
            if (d > worst[f]) worst[f] = d;
            if (d < 0 || d > 1e-9) {
              ok = false;
              snprintf(why, sizeof why, "at %s the %s graph differs: relative %g", sizes,
                       f ? "most rewritten" : "extracted", d);
            }
          }
        }
      }
      c->arena = home;
      arena_free(scratch);
    }
    if (!done) ok = false, snprintf(why, sizeof why, "no small instance elaborates");
  }
  printf("%s %s %s: %d nodes; %s, %d iterations, %d e-nodes, %d e-classes, %.4f s; rewrites: %s; at %s: "
         "rel %.1e, most rewritten rel %.1e (%s)%s%s\n",
         ok ? "ok  " : "FAIL", file, entry, nodes, eg_stop_name(r1.stop), r1.niters, r1.enodes, r1.eclasses, r1.seconds,
         x1 ? used : "-", sizes, worst[0], worst[1], rewritten, ok ? "" : "; ", why);
  return ok;
}

int main(int argc, char **argv) {
  glob_t gl = {0};
  int nfiles;
  char **files;
  if (argc > 1) {
    files = argv + 1;
    nfiles = argc - 1;
  } else {
    glob("examples/*.lean", 0, NULL, &gl);
    files = gl.gl_pathv;
    nfiles = (int)gl.gl_pathc;
  }
  int pass = 0, fail = 0;
  for (int f = 0; f < nfiles; f++) {
    Arena *a = arena_new();
    Ctx c;
    ctx_init(&c, a, stderr);
    jmp_buf jb;
    c.unwind = &jb;
    Program prog = {0};
    char err[512];
    SrcFile *src = src_load(a, files[f], err, sizeof err);
    if (!src || setjmp(jb)) {
      printf("FAIL %s: does not load\n", files[f]);
      fail++;
      arena_free(a);
      continue;
    }
    front_load(&c, &prog, src);
    for (int i = 0; i < prog.ndecls; i++) {
      const Decl *d = prog.decls[i];
      if (d->file->is_prelude || d->is_type) continue;
      /* a concrete instance elaborates with no sizes */
      Arena *probe = arena_new();
      c.arena = probe;
      Graph *g = elab_quiet(&c, &prog, d->name, NULL, 0);
      c.arena = a;
      arena_free(probe);
      if (!g) continue;
      if (one_instance(&c, &prog, files[f], d->name)) pass++;
      else fail++;
    }
    arena_free(a);
  }
  if (argc <= 1) globfree(&gl);
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
