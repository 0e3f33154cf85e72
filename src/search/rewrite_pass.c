/*
 * rewrite_pass.c: equality saturation before the plan search.
 *
 * The entry's graph goes into an e-graph, the SAFE rules of rules.def grow
 * it (src/rewrite), and the term the search then plans is extracted by an
 * IO-aware cost: FLOPs (elementwise per output element, reductions per
 * input element, products 2MNK), layout ops nearly free, and one term for
 * memory traffic the term forces: a gather reads its data from memory, so
 * gathering from a computed tensor (a product's logits) forces that tensor
 * to be written and read, charged at the machine balance (FLOPs per byte
 * of the H200: 989 TFLOP/s over 4.8 TB/s).  The one-hot sum the gather
 * rewrites to costs FLOPs instead and streams with its axis.
 *
 * Sizes in the cost are read through the dimensions' symbolic names at the
 * entry's own sizes (`bind`), so a shrunken instance of the program (verify)
 * extracts the term the full-size program extracts.
 *
 * An experiment, off by default (TS_UNSAFE=matmul-row-shift,matmul-col-bias):
 * layer norm before a wide linear layer as one kernel over the activations,
 * y = rstd (x W' - mean colsum W') + b W, W' the gain folded into W.  The
 * named UNSAFE rules then run, and the extraction charges a product whose
 * left operand is normalized by a statistic of its own row (x - mean,
 * x * rstd: it cannot stream through the K loop, so it is written and read
 * back) -- without that charge the split form only adds FLOPs and is never
 * extracted.  What it gives today (ln_linear_big): the split form extracted,
 * but 7 kernels at 659 us against the default's 2 at 627.  The search's
 * dissolve move reaches the kernel that reads x once (the product, the row
 * sum and the mean-shifted sum of squares in one K loop, the mean
 * correction in the epilogue) but prices it at 762 us against 589 for the
 * product alone: the Welford pair is reduced across threads every trip
 * (the shifted sum reads the running mean), where FlashNorm's sum of
 * squares waits until after the loop (defer.c); a lane-wise Welford state
 * merged once by Chan's rule after the loop would remove that.  The column
 * sums of W' are split reductions of their own,
 * and the charge applied to every program moves RMSNorm's scale out of the
 * block's and the LM's products, which the search then plans worse
 * (2362 against 2300 us, 233 against 218 us predicted).  Still missing for
 * a default: the mean correction's cancellation (|mean| >> std) bounded at
 * run time, colsum W' taken from W' as stored (rounded), not as computed.
 *
 * How large the cancellation is (bench/exp/s19/ln_cancel.py: x W'
 * accumulated in float32 one 16-wide step at a time, K = 4096): a
 * relative error of about 2.5e-7 times |mean|/std (2.5e-5 at 100, 8e-5 at
 * 236), under bfloat16's output rounding (4e-3) while |mean|/std < 16000.
 * Rows of bfloat16 data that far out are ties with few outliers (4095
 * elements 1000 and one 1004: 4.1e-3), and a constant row (std 0, rstd =
 * 1/sqrt(eps)) gives noise where the exact result is b W.  Shifting x by a
 * value known before the loop (its row's first element) bounds
 * |mean - c|/std by sqrt(K) but rounds x - c to bfloat16 before the
 * product, an error of about eps_bf16 sqrt(1 + (mean - c)^2/var) (the
 * script: 3.5e-3 for N(0, 1) rows, as rounding the normalized row does,
 * but 9.5e-2 with 100 in the first column).  So the one-kernel form needs
 * a guard: a row whose |mean| rstd exceeds a bound (1000: an error of
 * 2.5e-4) flagged by the kernel, and its output recomputed by the safe
 * path (statistics first, then the normalized product, as the narrow
 * plan does) in a kernel that returns at once when no row is flagged.
 *
 * Measured (session 20, H100, docs/BENCHMARKS.md; bench/exp/s20): at
 * 8192 x 4096 x 4096 the default's two kernels take 0.430 ms (Triton; the
 * normalizing kernel 43 us of it), the rules' chosen plan 0.573 and the
 * one-kernel runner-up 0.561 (its product kernel 493 us against the plain
 * product's 368: each of the 16 column blocks recomputes its rows' Welford
 * pair; its weight kernels 61 us); at 16384 x 2048 x 2048 and
 * 32768 x 1024 x 1024 the rules' plans are 1.3x to 4.4x slower still.  The
 * one kernel can save at most the normalizing kernel, and its statistics
 * cost three times that, so it would pay only with the statistics nearly
 * free: computed once per row block (a kernel looping over the column
 * blocks of its rows) or by warps the tensor cores leave idle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../rewrite/rewrite.h"
#include "search.h"

#define BYTES_PER_FLOP_BALANCE 206.0 /* H200: 989e12 / 4.8e12 */

/* computed: the class's value is computed (not an input or a layout of
   one); pointwise: by an elementwise op, so a reduction over it must first
   hold it as a tile; stat: a statistic along the last axis (a reduction
   over it, or an elementwise function of such statistics); normalized:
   an elementwise function of a statistic broadcast back along that axis
   (x - mean, x * rstd) */
typedef struct Summary { bool computed, pointwise, stat, normalized; } Summary;

/* The sizes bound, and the value of each symbolic size met so far by its
   string's address (the extraction asks for the same few thousands of
   times: parsing "H*D" each time was most of its cost on a deep model) */
#define BIND_MEMO 1024
typedef struct Bind {
  Summary canon[16]; /* every summary there is: what a term's cost points its readers to */
  const SizeArg *v;
  int n;
  bool charge_normalized;
  const char *memo_sym[BIND_MEMO];
  double memo_val[BIND_MEMO];
} Bind;

static double dim_at(const Dim *d, Bind *b) {
  if (!d->sym || !b->n) return (double)d->n;
  uint64_t h = (uint64_t)(uintptr_t)d->sym * 0x9e3779b97f4a7c15ull;
  for (int i = (int)(h >> 54), probes = 0; probes < BIND_MEMO; i = (i + 1) & (BIND_MEMO - 1), probes++) {
    if (b->memo_sym[i] == d->sym) return b->memo_val[i];
    if (!b->memo_sym[i]) {
      int64_t v;
      double r = dim_value_at(d, b->v, b->n, &v) ? (double)v : (double)d->n;
      b->memo_sym[i] = d->sym;
      b->memo_val[i] = r;
      return r;
    }
  }
  int64_t v;
  return dim_value_at(d, b->v, b->n, &v) ? (double)v : (double)d->n;
}

static double numel_at(const Shape *s, Bind *b) {
  double n = 1;
  for (int i = 0; i < s->rank; i++) n *= dim_at(&s->d[i], b);
  return n;
}

static double io_cost(const EgTerm *t, void **summary) {
  Bind *b = t->user;
  double own = 0, out = numel_at(&t->facts->shape, b);
  bool computed = false, pointwise = false, stat = false, normalized = false;
  const Shape *os = &t->facts->shape;
  bool wide = os->rank > 0 && dim_at(&os->d[os->rank - 1], b) > 1;
  switch (op_info[t->op].cls) {
  case OPC_LEAF: break;
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT: {
    own = out, computed = pointwise = true;
    bool dep = false;
    for (int i = 0; i < t->nin; i++) {
      const Summary *k = t->kid_summary[i];
      dep |= k && (k->stat || k->normalized);
    }
    if (dep) *(wide ? &normalized : &stat) = true;
    break;
  }
  case OPC_REDUCE: {
    /* a reduction reads its operand as a tile: an operand computed
       elementwise is written into one first (a pass over the tile and a
       buffer beside it), where a product's accumulator or an input's tile
       is read as it is -- so the max of a scaled product is cheaper as the
       scaled max of the product */
    const Summary *k = t->kid_summary[0];
    double n = numel_at(&eg_facts(t->eg, t->kids[0])->shape, b);
    own = n + (k && k->pointwise ? n : 0), computed = true;
    stat = t->at->axis == eg_facts(t->eg, t->kids[0])->shape.rank - 1;
    break;
  }
  case OPC_MATMUL: {
    const Shape *a = &eg_facts(t->eg, t->kids[0])->shape;
    own = 2 * out * dim_at(&a->d[a->rank - 1], b);
    computed = true;
    /* a left operand normalized along the contraction axis by a statistic
       of its own row cannot stream through the product's K loop (the
       statistic is known only after the row): it is written to memory and
       read back, or recomputed per column block */
    const Summary *k = t->kid_summary[0];
    if (b->charge_normalized && k && k->normalized) own += 2 * 2 * numel_at(a, b) * BYTES_PER_FLOP_BALANCE;
    break;
  }
  case OPC_LAYOUT:
  case OPC_CONCAT: {
    own = 1e-3 * out;
    for (int i = 0; i < t->nin; i++) {
      const Summary *k = t->kid_summary[i];
      computed |= k && k->computed;
    }
    break;
  }
  case OPC_GATHER: {
    own = out;
    /* gathering from a computed tensor: it must be in memory, written and read */
    const Summary *k = t->kid_summary[0];
    if (k && k->computed) own += 2 * 2 * numel_at(&eg_facts(t->eg, t->kids[0])->shape, b) * BYTES_PER_FLOP_BALANCE;
    break;
  }
  }
  /* one of the sixteen, not a new one: the extraction asks millions of times */
  *summary = &b->canon[computed | pointwise << 1 | stat << 2 | normalized << 3];
  double c = own;
  for (int i = 0; i < t->nin; i++) c += t->kid_cost[i];
  return c;
}

static Graph *rewrite(Graph *g, const SizeArg *bind, int nbind, const char *skip_family, RewriteInfo *info, FILE *report);

/* Is name one of the comma-separated list's items? */
static bool name_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

Graph *search_rewrite(Graph *g, const SizeArg *bind, int nbind, RewriteInfo *info) {
  return rewrite(g, bind, nbind, NULL, info, NULL);
}

Graph *search_rewrite_ex(Graph *g, const SizeArg *bind, int nbind, const char *skip_family, RewriteInfo *info) {
  return rewrite(g, bind, nbind, skip_family, info, NULL);
}

Graph *search_rewrite_report(Graph *g, const SizeArg *bind, int nbind, FILE *report) {
  return rewrite(g, bind, nbind, NULL, NULL, report);
}

static Graph *rewrite(Graph *g, const SizeArg *bind, int nbind, const char *skip_family, RewriteInfo *info, FILE *report) {
  RewriteInfo local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  EGraph *eg = eg_from_graph(g);
  bool enable[256];
  EgRunOpts ro = {0};
  /* TS_UNSAFE=name,name: an experiment, the UNSAFE rules named also run
     (and the extraction charges a row-normalized operand of a product, the
     cost those rules avoid); off by default, see the note atop the file */
  const char *un = getenv("TS_UNSAFE");
  bool any_unsafe = false;
  if ((skip_family || un) && rw_nrules() <= 256) {
    for (int i = 0; i < rw_nrules(); i++) {
      bool named = un && rw_rule(i)->unsafe && name_listed(un, rw_rule(i)->name);
      any_unsafe |= named;
      enable[i] = (!rw_rule(i)->unsafe || named) && (!skip_family || strcmp(rw_rule(i)->family, skip_family));
    }
    ro.enable = enable;
  }
  const EgReport *rep = eg_run(eg, &ro);
  if (report) eg_report_print(report, rep);
  info->stop = rep->stop;
  info->iterations = rep->niters;
  info->enodes = rep->enodes;
  info->eclasses = rep->eclasses;
  info->seconds = rep->seconds;
  Bind *b = calloc(1, sizeof *b);
  if (!b) ts_fatal(g->ctx, "out of memory");
  b->v = bind, b->n = nbind, b->charge_normalized = any_unsafe;
  for (int i = 0; i < 16; i++)
    b->canon[i] = (Summary){.computed = i & 1, .pointwise = i >> 1 & 1, .stat = i >> 2 & 1, .normalized = i >> 3 & 1};
  const char *const *used = NULL;
  int nused = 0;
  Graph *out = eg_extract_dag(eg, eg_root(eg), io_cost, b, &used, &nused);
  free(b);
  /* the names outlive the e-graph */
  info->rules = arena_alloc(g->ctx->arena, sizeof(char *) * (size_t)(nused ? nused : 1));
  for (int i = 0; i < nused; i++) info->rules[i] = arena_strdup(g->ctx->arena, used[i]);
  info->nrules = nused;
  if (report) {
    fprintf(report, "rewrites used:");
    for (int i = 0; i < nused; i++) fprintf(report, " %s", used[i]);
    fprintf(report, "%s\n", nused ? "" : " none");
  }
  eg_free(eg);
  return out;
}
