/*
 * structures.c: the search must find the IO-aware structures of the field
 * by itself, from programs as written (examples/ and the held-out
 * tests/search/programs.lean, which no rule or cost term was tuned on).
 *
 * Each check runs the pipeline `opt` runs (equality saturation, the plan
 * search at the entry's sizes, the plan lowering) and asserts a property
 * of the tile program that comes out: how many kernels, which global
 * buffers exist (no N×N scores, no [M, V] logits), loop bounds that depend
 * on the block index (causal and window skipping), a specialized `if`
 * (masking on diagonal tiles only), a combine kernel exactly when a split
 * pays (an under-filled grid) and never for a square product that fills
 * the GPU.  It also times each search (at most 10 s) and runs it twice to
 * see the same program printed (determinism).
 *
 * usage: build/structures [ROOT]   (ROOT: the repository, default ".")
 * Prints one line per check and "N passed, M failed"; exit 1 on a failure.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/front/front.h"
#include "../../src/search/search.h"
#include "../../src/tile/tile.h"

static const char *root = ".";
static int npass, nfail;

typedef struct Run {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Program prog;
  TileProgram *tp;
  char printed[1 << 16]; /* the start of the tile program's printout */
  double seconds;        /* rewrite + search + lowering */
  SearchStats stats;
} Run;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The program opt emits for entry of file (relative to root) at the sizes
   given (a generic entry's), the search priced at most budget kernels (0:
   its default); NULL on any error. */
static TileProgram *compile_sized(Run *r, const char *file, const char *entry, SizeArg *sizes, int nsizes,
                                  int budget) {
  memset(r, 0, sizeof *r);
  r->a = arena_new();
  ctx_init(&r->c, r->a, stderr);
  r->c.unwind = &r->jb;
  char path[1024], err[512];
  snprintf(path, sizeof path, "%s/%s", root, file);
  SrcFile *f = src_load(r->a, path, err, sizeof err);
  if (!f) {
    fprintf(stderr, "%s\n", err);
    return NULL;
  }
  if (setjmp(r->jb)) return NULL;
  front_load(&r->c, &r->prog, f);
  Graph *g = elab_entry(&r->c, &r->prog, entry, (Pos){0}, sizes, nsizes);
  SizeArg bind[32];
  int nb = nsizes ? nsizes : elab_entry_nats(&r->c, &r->prog, entry, bind, 32);
  if (nsizes) memcpy(bind, sizes, sizeof(SizeArg) * (size_t)(nsizes < 32 ? nsizes : 32));
  double t0 = now();
  Graph *rw = search_rewrite(g, bind, nb, NULL);
  SearchOpts so = {.budget = budget};
  Plan *p = plan_search(rw, DT_BF16, &so, &r->stats);
  r->tp = tile_lower_plan(p);
  r->seconds = now() - t0;
  if (!r->tp || !tile_check(r->tp, stderr)) return r->tp = NULL;
  FILE *m = fmemopen(r->printed, sizeof r->printed - 1, "w");
  if (m) {
    tile_print(m, r->tp);
    fclose(m);
  }
  return r->tp;
}

static TileProgram *compile_budget(Run *r, const char *file, const char *entry, int budget) {
  return compile_sized(r, file, entry, NULL, 0, budget);
}

static TileProgram *compile(Run *r, const char *file, const char *entry) { return compile_budget(r, file, entry, 0); }

static void done(Run *r) { arena_free(r->a); }

static void check(bool ok, const char *file, const char *entry, const char *what) {
  printf("%s %s %s: %s\n", ok ? "ok  " : "FAIL", file, entry, what);
  ok ? npass++ : nfail++;
}

/* ---- properties of a tile program ---- */

static int kernels(const TileProgram *tp) { return tp->kernels.len; }

static int kernels_of(const TileProgram *tp, KernelKind kind) {
  int n = 0;
  for (int i = 0; i < tp->kernels.len; i++) n += tp->kernels.data[i]->kind == kind;
  return n;
}

/* A temporary or scratch global with a dimension named a and another named
   b (b NULL: any other dimension), by the program's own size names. */
static bool same_sym(const Dim *d, const char *s) { return d->sym && !strcmp(d->sym, s); }

static bool temp_with_dims(const TileProgram *tp, const char *a, const char *b) {
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *t = tp->globals.data[i];
    if (t->role != GB_TEMP && t->role != GB_SCRATCH) continue;
    for (int x = 0; x < t->shape.rank; x++)
      for (int y = 0; y < t->shape.rank; y++)
        if (x != y && same_sym(&t->shape.d[x], a) && (!b || same_sym(&t->shape.d[y], b))) return true;
    if (!b)
      for (int x = 0; x < t->shape.rank; x++) if (same_sym(&t->shape.d[x], a)) return true;
  }
  return false;
}

static void uses_block(const SExpr *e, void *ud) {
  if (e->kind == SX_VAR && (e->var == TV_BX || e->var == TV_BY || e->var == TV_BZ)) *(bool *)ud = true;
}

typedef struct LoopScan {
  bool lo_block, hi_block; /* some loop's lower / upper bound reads a block index */
  bool specialize;         /* a specialized if */
} LoopScan;

static bool scan_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  LoopScan *ls = ud;
  if (s->kind == ST_LOOP) {
    bool lo = false, hi = false;
    sexpr_walk(s->lo, uses_block, &lo);
    sexpr_walk(s->hi, uses_block, &hi);
    ls->lo_block |= lo;
    ls->hi_block |= hi;
  }
  if (s->kind == ST_IF && s->specialize) ls->specialize = true;
  return true;
}

static LoopScan scan(const TileProgram *tp) {
  LoopScan ls = {0};
  for (int i = 0; i < tp->kernels.len; i++) tile_walk(&tp->kernels.data[i]->body, scan_stmt, &ls);
  return ls;
}

static bool count_loop(const Stmt *s, int depth, void *ud) {
  (void)depth;
  *(int *)ud += s->kind == ST_LOOP;
  return true;
}

/* Loops over all kernels (a second pass over the keys is a second loop). */
static int loops(const TileProgram *tp) {
  int n = 0;
  for (int i = 0; i < tp->kernels.len; i++) tile_walk(&tp->kernels.data[i]->body, count_loop, &n);
  return n;
}

static bool has_loop(const TileProgram *tp) { return kernel_has(tp->kernels.data[0], ST_LOOP); }

/* Does kernel k load a global g? */
typedef struct Reads { const TBuf *g; bool hit; } Reads;
static void reads_load(const SExpr *e, void *ud) {
  if (e->kind == SX_LOAD && e->buf == ((Reads *)ud)->g) ((Reads *)ud)->hit = true;
}
static void reads_exprs(const SExpr *e, void *ud) { sexpr_walk(e, reads_load, ud); }
static bool reads_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  stmt_exprs(s, reads_exprs, ud);
  return true;
}
static bool kernel_reads(const Kernel *k, const TBuf *g) {
  Reads r = {g, false};
  tile_walk(&k->body, reads_stmt, &r);
  return r.hit;
}

/* Does kernel k read Params only (a weight prepared ahead, such as g ⊙ W)? */
static bool params_only(const TileProgram *tp, const Kernel *k) {
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *t = tp->globals.data[i];
    bool param = t->role == GB_INPUT && t->node && t->node->role == ROLE_PARAM;
    if (!param && t->role != GB_OUTPUT && kernel_reads(k, t)) return false;
  }
  return true;
}

/* the most trips of any block through kernel 0's first loop (0 without one) */
static int64_t first_loop_trips(const TileProgram *tp) {
  const Kernel *k = tp->kernels.data[0];
  for (int i = 0; i < k->body.len; i++)
    if (k->body.data[i]->kind == ST_LOOP) return tile_loop_trips_max(k, k->body.data[i]);
  return 0;
}

/* kernels that read a program input that is not a Param: passes over the activations */
static int input_readers(const TileProgram *tp) {
  int n = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    bool reads = false;
    for (int i = 0; i < tp->globals.len; i++) {
      const TBuf *t = tp->globals.data[i];
      reads |= t->role == GB_INPUT && t->node && t->node->role != ROLE_PARAM && kernel_reads(tp->kernels.data[k], t);
    }
    n += reads;
  }
  return n;
}

static int act_kernels(const TileProgram *tp) {
  int n = 0;
  for (int k = 0; k < tp->kernels.len; k++) n += !params_only(tp, tp->kernels.data[k]);
  return n;
}

/* FlashNorm: the one kernel that reads the activations (inputs that are not
   Params) is the product's, with the sum of squares streamed in its loop;
   every other kernel reads Params only (weights prepared ahead, such as
   g ⊙ W) */
static bool flashnorm(const TileProgram *tp) {
  int readers = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *kk = tp->kernels.data[k];
    bool acts = false;
    for (int i = 0; i < tp->globals.len; i++) {
      const TBuf *t = tp->globals.data[i];
      if (t->role == GB_INPUT && t->node && t->node->role != ROLE_PARAM && kernel_reads(kk, t)) acts = true;
    }
    if (!acts) continue;
    readers++;
    if (!kernel_has(kk, ST_GEMM) || !kernel_has(kk, ST_REDUCE) || !kernel_has(kk, ST_LOOP)) return false;
  }
  return readers == 1;
}

/* Does some kernel take a row maximum (amax) of a product's accumulator
   tile itself: no element-wise tile (scaled scores) made only to be
   reduced? */
typedef struct MaxScan { const TBuf *acc[16]; int nacc; bool hit; } MaxScan;
static bool gemm_dst(const Stmt *s, int depth, void *ud) {
  (void)depth;
  MaxScan *m = ud;
  if (s->kind == ST_GEMM && m->nacc < 16) m->acc[m->nacc++] = s->dst;
  return true;
}
static bool max_of_acc(const Stmt *s, int depth, void *ud) {
  (void)depth;
  MaxScan *m = ud;
  if (s->kind == ST_REDUCE && s->reduce_op == OP_AMAX)
    for (int i = 0; i < m->nacc; i++) m->hit |= s->a == m->acc[i];
  return true;
}
/* Is no reduction left inside a loop of a kernel with a product (the sum
   of squares accumulated element-wise in the K loop and folded once after
   it, defer.c)? */
static bool reduce_in_loop(const Stmt *s, int depth, void *ud) {
  if (s->kind == ST_REDUCE && depth > 0) *(bool *)ud = true;
  return true;
}
static bool no_loop_reduce(const TileProgram *tp) {
  for (int i = 0; i < tp->kernels.len; i++) {
    bool hit = false;
    tile_walk(&tp->kernels.data[i]->body, reduce_in_loop, &hit);
    if (hit && kernel_has(tp->kernels.data[i], ST_GEMM)) return false;
  }
  return true;
}
static bool max_of_product(const TileProgram *tp) {
  for (int i = 0; i < tp->kernels.len; i++) {
    MaxScan m = {0};
    tile_walk(&tp->kernels.data[i]->body, gemm_dst, &m);
    tile_walk(&tp->kernels.data[i]->body, max_of_acc, &m);
    if (m.hit) return true;
  }
  return false;
}

/* Every gemm's right operand filled from memory is a copy whose tile
   columns run along memory's last dimension (the key tile of split heads,
   kᵀ, loaded as stored and transposed by the gemm, not gathered column by
   column), and some gemm transposes its right operand. */
typedef struct GemmFill { const Stmt *fill[64]; const TBuf *dst[64]; int n; bool trans, gathered; } GemmFill;
static void reads_j(const SExpr *e, void *ud) {
  if (e->kind == SX_VAR && e->var == TV_J) *(bool *)ud = true;
}
static bool uses_j(const SExpr *x) {
  bool hit = false;
  sexpr_walk(x, reads_j, &hit);
  return hit;
}
static bool note_fill(const Stmt *s, int depth, void *ud) {
  (void)depth;
  GemmFill *g = ud;
  if (s->kind == ST_MAP && s->dst->scope == SCOPE_SHARED && s->value && s->value->kind == SX_LOAD && g->n < 64)
    g->fill[g->n] = s, g->dst[g->n++] = s->dst;
  return true;
}
static bool check_gemm(const Stmt *s, int depth, void *ud) {
  (void)depth;
  GemmFill *g = ud;
  if (s->kind != ST_GEMM) return true;
  g->trans |= s->trans_b;
  for (int i = 0; i < g->n; i++) {
    if (g->dst[i] != s->b) continue;
    /* a copy whose j (the tile's contiguous axis) runs along the global's
       last dimension alone */
    const SExpr *v = g->fill[i]->value;
    bool ok = tile_map_is_copy(g->fill[i]) && uses_j(v->idx[v->nidx - 1]);
    for (int d = 0; d + 1 < v->nidx; d++) ok &= !uses_j(v->idx[d]);
    if (!ok) g->gathered = true;
  }
  return true;
}
static bool operands_copied(const TileProgram *tp) {
  bool trans = false;
  for (int i = 0; i < tp->kernels.len; i++) {
    GemmFill g = {.n = 0};
    tile_walk(&tp->kernels.data[i]->body, note_fill, &g);
    tile_walk(&tp->kernels.data[i]->body, check_gemm, &g);
    if (g.gathered) return false;
    trans |= g.trans;
  }
  return trans;
}

/* ---- the checks ---- */

typedef enum { ONE_KERNEL_STREAMED, CAUSAL, WINDOW, SPLIT, NO_SPLIT, NO_BUFFER, KERNELS_AT_MOST, ACT_KERNELS_AT_MOST, FLASHNORM, LOOPS_AT_MOST, COMBINE_BLOCKS, INPUT_READERS_AT_MOST, TRIPS_AT_MOST, MAX_OF_PRODUCT, NO_LOOP_REDUCE, OPERANDS_COPIED } Want;

typedef struct Case {
  const char *file, *entry;
  Want want;
  const char *da, *db; /* NO_BUFFER, ONE_KERNEL_STREAMED: the forbidden dimensions (by size name) */
  int most;            /* KERNELS_AT_MOST, LOOPS_AT_MOST, INPUT_READERS_AT_MOST, TRIPS_AT_MOST; COMBINE_BLOCKS: at least */
  const char *what;
} Case;

static const Case cases[] = {
    /* attention: one kernel, a key loop, no N×N buffer */
    {"examples/attention.lean", "attention_4k", ONE_KERNEL_STREAMED, "N", "N", 0, "attention: one kernel over key tiles"},
    {"examples/attention.lean", "attention_4k", NO_BUFFER, "N", "N", 0, "attention: no N×N global buffer"},
    {"examples/attention.lean", "attention_b1_n16k", NO_BUFFER, "N", "N", 0, "attention at 16k: no N×N buffer"},
    /* the max of the scaled scores is the scaled max of the product
       (amax-unscale), taken over the accumulator: no scaled-score tile, and
       the scale folds into exp2's constant */
    {"examples/attention.lean", "attention_4k", MAX_OF_PRODUCT, NULL, NULL, 0,
     "attention: the row max over the product's accumulator"},
    {"examples/attention.lean", "attention_b8_h32_n2048_d64", MAX_OF_PRODUCT, NULL, NULL, 0,
     "attention at D = 64: the row max over the product's accumulator"},
    {"tests/search/programs.lean", "biased_attention_big", ONE_KERNEL_STREAMED, "N", "N", 0,
     "held-out: attention with an additive score bias"},
    {"tests/search/programs.lean", "temp_attention_big", ONE_KERNEL_STREAMED, "N", "N", 0,
     "held-out: softmax written out with a temperature"},
    {"tests/search/programs.lean", "prefix_attention_big", ONE_KERNEL_STREAMED, "N", "N", 0,
     "held-out: attention over a key prefix"},
    /* query-key-normalized attention: the softmax's scale is a value per
       query row (rsqrt of q's mean square), and still one pass over the keys */
    {"tests/search/programs.lean", "qk_norm_attention_big", NO_BUFFER, "N", "N", 0,
     "held-out: qk-norm attention: no N×N buffer"},
    {"tests/search/programs.lean", "qk_norm_attention_big", KERNELS_AT_MOST, NULL, NULL, 2,
     "held-out: qk-norm attention: k's normalization, then one kernel over key tiles"},
    {"tests/search/programs.lean", "qk_norm_attention_b1", SPLIT, NULL, NULL, 0,
     "held-out: qk-norm attention at batch 1: keys split across blocks + combine (the row factor carried)"},
    /* at D = 256 one kernel: 64 query rows a block, all 256 output columns
       on one warpgroup, so no block recomputes the scores for another half
       of D (with 128 columns the model stored the scores: 2 kernels; a
       128 × 256 P⬝V tile had once made it store P as well: 3) */
    {"tests/search/programs.lean", "softcap_attention_d256", KERNELS_AT_MOST, NULL, NULL, 1,
     "held-out: soft-capped attention at D = 256: one kernel"},
    {"tests/search/programs.lean", "softcap_attention_d256", NO_BUFFER, "N", "N", 0,
     "held-out: soft-capped attention at D = 256: no N×N buffer"},
    {"tests/search/programs.lean", "qk_norm_attention_b1", NO_BUFFER, "N", "N", 0,
     "held-out: qk-norm attention at batch 1: no N×N buffer"},
    /* causal: the key loop's bound follows the query block; masking on diagonal tiles only */
    {"examples/causal_attention.lean", "causal_attention_4k", CAUSAL, NULL, NULL, 0,
     "causal: one kernel, key loop bounded by the query block, mask specialized"},
    {"examples/causal_attention.lean", "causal_attention_b1_n16k", CAUSAL, NULL, NULL, 0, "causal at 16k"},
    /* ... also when the mask is a float tensor compared with a constant */
    {"tests/search/programs.lean", "float_mask_attention_big", CAUSAL, NULL, NULL, 0,
     "held-out: causal mask as select(j <= i, 1, 0) > 0.5: key loop bounded by the query block"},
    {"tests/search/programs.lean", "drop_mask_attention_big", CAUSAL, NULL, NULL, 0,
     "held-out: causal mask as 0.5 > select(j > i, 1, 0): key loop bounded by the query block"},
    /* sliding window: both bounds follow the query block */
    {"examples/softcap_window_attention.lean", "softcap_window_attention_4k", WINDOW, NULL, NULL, 0,
     "window: one kernel, key loop over the window (both bounds)"},
    /* attention sinks beside a sliding window: the sink tile, then the
       window's (at most 1 + 1024/128 + 1 of the 32 key tiles) */
    {"tests/search/programs.lean", "sink_window_attention_big", KERNELS_AT_MOST, NULL, NULL, 1,
     "held-out: sinks + sliding window: one kernel"},
    {"tests/search/programs.lean", "sink_window_attention_big", TRIPS_AT_MOST, NULL, NULL, 11,
     "held-out: sinks + sliding window: the key loop jumps from the sinks to the window"},
    /* chunked attention (a mask of integer quotients i / C == j / C): the
       key loop over the query block's chunk, both bounds from the block
       (4 of the 32 key tiles at C = 512) */
    {"tests/search/programs.lean", "chunked_attention_big", WINDOW, NULL, NULL, 0,
     "held-out: chunked attention: one kernel, key loop over the query block's chunk (both bounds)"},
    {"tests/search/programs.lean", "chunked_attention_big", TRIPS_AT_MOST, NULL, NULL, 4,
     "held-out: chunked attention: 4 key tiles of 32 per query block"},
    /* GQA decode at long context: split keys + combine */
    {"examples/gqa_decode.lean", "gqa_decode_b1", SPLIT, NULL, NULL, 0, "GQA decode: keys split across blocks + combine"},
    {"examples/gqa_decode.lean", "gqa_decode_b1", NO_BUFFER, "S", NULL, 0, "GQA decode: no buffer along the keys"},
    /* the merged heads are stored through the reshape by the combine: no copy kernel */
    {"examples/gqa_decode.lean", "gqa_decode_b1", KERNELS_AT_MOST, NULL, NULL, 2,
     "GQA decode: split kernel and combine only (the output reshape stored through)"},
    /* RMSNorm -> matmul: one kernel over the activations (FlashNorm), the
       gain folded into the weights by a kernel that reads Params only where
       M > N makes that cheaper (matmul-colscale-left); no normalized buffer */
    {"examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", FLASHNORM, NULL, NULL, 0,
     "RMSNorm -> matmul: one kernel reads x, sum of squares in the product's loop"},
    {"examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", NO_BUFFER, "M", "K", 0,
     "RMSNorm -> matmul: no normalized [M, K] buffer"},
    {"examples/rmsnorm_matmul.lean", "rmsnorm_matmul_16k", NO_LOOP_REDUCE, NULL, NULL, 0,
     "RMSNorm -> matmul: squares summed element-wise in the K loop, rows reduced once after it"},
    {"tests/emit/small_products.lean", "l1_matmul_big", NO_LOOP_REDUCE, NULL, NULL, 0,
     "a row's L1 norm beside a product: |x| summed element-wise in the K loop"},
    {"tests/emit/small_products.lean", "min_shifted_matmul_big", NO_LOOP_REDUCE, NULL, NULL, 0,
     "a row's minimum beside a product: the loaded tile folded into a fragment of its own"},
    /* LN -> linear: one kernel (statistics in passes over K before the
       product's K loop) where the model prices it cheaper: a narrow
       projection.  For a wide one (ln_linear_big, N 4096) it keeps two
       kernels: every column block would recompute the row statistics, and
       folding the mean into the epilogue (x W - mean colsum W) is a
       cancellation-prone rewrite the search does not take by default. */
    {"tests/search/programs.lean", "ln_linear_narrow", KERNELS_AT_MOST, NULL, NULL, 1, "LN -> narrow linear: one kernel"},
    {"tests/search/programs.lean", "ln_linear_narrow", NO_BUFFER, "M", "K", 0, "LN -> linear: no normalized [M, K] buffer"},
    /* the key tiles of split heads (kᵀ computed from a stored projection
       by layout ops) loaded as stored, the gemm transposing them */
    {"examples/transformer_block.lean", "transformer_block_b4_n2048", OPERANDS_COPIED, NULL, NULL, 0,
     "block: every product's right operand from memory copied along its rows, kT transposed by the gemm"},
    {"examples/transformer_lm.lean", "lm_small", OPERANDS_COPIED, NULL, NULL, 0,
     "LM: every product's right operand from memory copied along its rows, kT transposed by the gemm"},
    /* rows: one kernel */
    {"examples/softmax.lean", "softmax_16k_8k", KERNELS_AT_MOST, NULL, NULL, 1, "softmax rows: one kernel"},
    {"examples/layernorm.lean", "layernorm_16k_8k", KERNELS_AT_MOST, NULL, NULL, 1, "layer norm rows: one kernel"},
    /* few long rows, split across blocks: max and sum in one pass (a running
       max beside the sum, merged by one combine), then the pass that writes */
    {"tests/search/programs.lean", "softmax_few_long_rows", SPLIT, NULL, NULL, 0,
     "held-out: softmax over 4 rows of 400000: rows split across blocks"},
    {"tests/search/programs.lean", "softmax_few_long_rows", INPUT_READERS_AT_MOST, NULL, NULL, 2,
     "held-out: softmax over 4 rows of 400000: two passes over x"},
    /* ... and layer norm's mean and variance (Chan's merge across blocks) */
    {"tests/search/programs.lean", "ln_few_long_rows", SPLIT, NULL, NULL, 0,
     "held-out: layer norm over 4 rows of 400000: rows split across blocks"},
    {"tests/search/programs.lean", "ln_few_long_rows", INPUT_READERS_AT_MOST, NULL, NULL, 2,
     "held-out: layer norm over 4 rows of 400000: two passes over x (mean and variance in one)"},
    {"examples/rmsnorm.lean", "rmsnorm_16k_8k", KERNELS_AT_MOST, NULL, NULL, 1, "RMSNorm rows: one kernel"},
    /* held-out: queries scaled before the product: one kernel, one pass over the keys */
    {"tests/search/programs.lean", "q_scaled_attention_big", KERNELS_AT_MOST, NULL, NULL, 1,
     "held-out: q-scaled attention: one kernel"},
    {"tests/search/programs.lean", "q_scaled_attention_big", LOOPS_AT_MOST, NULL, NULL, 1,
     "held-out: q-scaled attention: one pass over the keys (one product for amax and exp)"},
    /* held-out: GQA decode written out with exp(s - amax s): split keys, K read once */
    {"tests/search/programs.lean", "gqa_scaled_decode_b2", SPLIT, NULL, NULL, 0,
     "held-out: written-out GQA decode: keys split across blocks + combine"},
    {"tests/search/programs.lean", "gqa_scaled_decode_b2", LOOPS_AT_MOST, NULL, NULL, 3,
     "held-out: written-out GQA decode: one pass over the keys (the combine's two loops over splits)"},
    {"tests/search/programs.lean", "log_softmax_big", KERNELS_AT_MOST, NULL, NULL, 1, "held-out: log-softmax rows: one kernel"},
    {"tests/search/programs.lean", "two_products_big", KERNELS_AT_MOST, NULL, NULL, 1,
     "held-out: a⬝W1 + b⬝W2 in one kernel"},
    /* split-K exactly when the grid under-fills */
    {"examples/matmul_large_k.lean", "matmul_256_k131072", SPLIT, NULL, NULL, 0, "256×131072×256: split-K + combine"},
    {"examples/matmul_large_k.lean", "matmul_16_k32768", SPLIT, NULL, NULL, 0, "16-row product, K 32768: split-K"},
    /* the combine merges partials in memory over its own, small tiles:
       enough blocks to read them at the memory's rate */
    {"examples/matmul_large_k.lean", "matmul_256_k131072", COMBINE_BLOCKS, NULL, NULL, 132,
     "split-K's combine: at least one block per SM"},
    {"examples/matmul_large_k.lean", "matmul_64_k32768", COMBINE_BLOCKS, NULL, NULL, 32,
     "split-K's combine of a 64×64 output: one element a thread"},
    {"tests/search/programs.lean", "square_matmul_big", NO_SPLIT, NULL, NULL, 0, "8192² product fills the GPU: no split"},
    /* SwiGLU: gate and up in one kernel */
    {"examples/swiglu_mlp.lean", "swiglu_mlp_8k", KERNELS_AT_MOST, NULL, NULL, 2,
     "SwiGLU: gate and up projections with SiLU·mul in one kernel, then down"},
    /* linear cross-entropy: logits never written */
    {"examples/linear_cross_entropy.lean", "linear_cross_entropy_8k", NO_BUFFER, "M", "V", 0,
     "linear cross-entropy: no [M, V] logits buffer"},
    /* the block: attention inside fuses (no N×N buffer), far fewer kernels than naive */
    {"examples/transformer_block.lean", "transformer_block_b4_n2048", NO_BUFFER, "N", "N", 0,
     "transformer block: no N×N buffer"},
    /* ... and in stacked layers (`layers`, W[l]), where q and k are each
       scaled after their projection and must be stored together for the
       attention to fuse (a compound move) */
    {"tests/search/programs.lean", "attn_stack_big", NO_BUFFER, "N", "N", 0,
     "held-out: stacked attention layers: no N×N buffer in any layer"},
    {"examples/transformer_lm.lean", "lm_small", NO_BUFFER, "N", "N", 0, "the small LM: no N×N buffer"},
    {"examples/transformer_block.lean", "transformer_block_b4_n2048", ACT_KERNELS_AT_MOST, NULL, NULL, 10,
     "transformer block: at most 10 kernels on activations (besides kernels that prepare Params)"},
};

/* the fewest blocks of a combine kernel (0 without one) */
static int64_t combine_blocks(const TileProgram *tp) {
  int64_t least = 0;
  for (int i = 0; i < tp->kernels.len; i++) {
    const Kernel *k = tp->kernels.data[i];
    int64_t b = k->grid[0] * k->grid[1] * k->grid[2];
    if (k->kind == KERNEL_COMBINE && (!least || b < least)) least = b;
  }
  return least;
}

static void run_case(const Case *c) {
  Run r;
  TileProgram *tp = compile(&r, c->file, c->entry);
  if (!tp) {
    check(false, c->file, c->entry, "the pipeline failed");
    done(&r);
    return;
  }
  bool ok = false;
  LoopScan ls = scan(tp);
  switch (c->want) {
  case ONE_KERNEL_STREAMED: ok = kernels(tp) == 1 && has_loop(tp) && !temp_with_dims(tp, c->da, c->db); break;
  case CAUSAL: ok = kernels(tp) == 1 && ls.hi_block && ls.specialize; break;
  case WINDOW: ok = kernels(tp) == 1 && ls.lo_block && ls.hi_block; break;
  case SPLIT: ok = kernels_of(tp, KERNEL_COMBINE) >= 1; break;
  case NO_SPLIT: ok = kernels_of(tp, KERNEL_COMBINE) == 0; break;
  case NO_BUFFER: ok = !temp_with_dims(tp, c->da, c->db); break;
  case KERNELS_AT_MOST: ok = kernels(tp) <= c->most; break;
  case ACT_KERNELS_AT_MOST: ok = act_kernels(tp) <= c->most; break;
  case FLASHNORM: ok = flashnorm(tp); break;
  case LOOPS_AT_MOST: ok = loops(tp) <= c->most; break;
  case COMBINE_BLOCKS: ok = combine_blocks(tp) >= c->most; break;
  case INPUT_READERS_AT_MOST: ok = input_readers(tp) <= c->most; break;
  case TRIPS_AT_MOST: ok = first_loop_trips(tp) > 0 && first_loop_trips(tp) <= c->most; break;
  case MAX_OF_PRODUCT: ok = max_of_product(tp); break;
  case NO_LOOP_REDUCE: ok = no_loop_reduce(tp); break;
  case OPERANDS_COPIED: ok = operands_copied(tp); break;
  }
  char what[300];
  snprintf(what, sizeof what, "%s (%d kernel%s)", c->what, kernels(tp), kernels(tp) == 1 ? "" : "s");
  check(ok, c->file, c->entry, what);
  done(&r);
}

/* Every example entry: searched in at most 10 s, twice to the same program. */
static void run_timing(const char *file, const char *entry) {
  Run r1, r2;
  TileProgram *a = compile(&r1, file, entry);
  TileProgram *b = a ? compile(&r2, file, entry) : NULL;
  char what[200];
  snprintf(what, sizeof what, "searched in %.2f s (at most 10), the same program twice", r1.seconds);
  check(a && b && r1.seconds <= 10 && r2.seconds <= 10 && !strcmp(r1.printed, r2.printed), file, entry, what);
  done(&r1);
  if (a) done(&r2);
}

/* A deep model: the language model at lm_medium's sizes with 32 layers
   instead of 8.  Its layers are alike but for their node ids (and where
   their weights sit in the stacked parameters): priced once by shape key,
   the search runs to its end within the time lm_medium needs at 8 (it took
   17 s, and at smaller sizes spent the pricing budget before reaching the
   first layers, when every layer's kernels were priced anew). */
static void run_deep(void) {
  SizeArg sizes[] = {{"B", 8, false}, {"N", 256, false}, {"V", 256, false}, {"D", 512, false},
                     {"H", 8, false}, {"F", 1408, false}, {"L", 32, false}};
  int ns = (int)(sizeof sizes / sizeof sizes[0]);
  Run r1, r2, r8;
  const char *file = "examples/transformer_lm.lean", *entry = "transformerLMLoss";
  TileProgram *a = compile_sized(&r1, file, entry, sizes, ns, 0);
  TileProgram *b = a ? compile_sized(&r2, file, entry, sizes, ns, 0) : NULL;
  TileProgram *c = compile(&r8, file, "lm_medium");
  char what[300];
  snprintf(what, sizeof what,
           "32 layers: searched in %.2f s (at most 10), stop '%s' after %d kernels priced (%d at 8 layers), "
           "the same program twice",
           r1.seconds, search_stop_name(r1.stats.stop), r1.stats.kernels_priced, r8.stats.kernels_priced);
  check(a && b && c && r1.seconds <= 10 && r1.stats.stop == STOP_SATURATED &&
            r1.stats.kernels_priced <= 2 * r8.stats.kernels_priced && !strcmp(r1.printed, r2.printed),
        file, entry, what);
  done(&r1);
  if (a) done(&r2);
  done(&r8);
}

/* A pricing budget the search spends: it stops there, with the stop reason
   said, and twice to the same program (where it stops depends on the
   budget, not the machine); with the default budget it runs to the end. */
static void run_budget(const char *file, const char *entry, int budget) {
  Run r1, r2, r3;
  TileProgram *a = compile_budget(&r1, file, entry, budget);
  TileProgram *b = a ? compile_budget(&r2, file, entry, budget) : NULL;
  char what[300];
  snprintf(what, sizeof what, "a budget of %d kernels priced: stop '%s' after %d, the same program twice", budget,
           search_stop_name(r1.stats.stop), r1.stats.kernels_priced);
  check(a && b && r1.stats.stop == STOP_BUDGET && r1.stats.kernels_priced >= budget && !strcmp(r1.printed, r2.printed),
        file, entry, what);
  TileProgram *c = compile(&r3, file, entry);
  snprintf(what, sizeof what, "the default budget (%d): stop '%s' after %d kernels priced, another program", SEARCH_BUDGET,
           search_stop_name(r3.stats.stop), r3.stats.kernels_priced);
  check(c && r3.stats.stop == STOP_SATURATED && (!a || strcmp(r1.printed, r3.printed)), file, entry, what);
  done(&r1);
  if (a) done(&r2);
  done(&r3);
}

int main(int argc, char **argv) {
  if (argc > 1) root = argv[1];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  static const char *timed[][2] = {
      {"examples/transformer_lm.lean", "lm_medium"},
      {"examples/transformer_block.lean", "transformer_block_b4_n2048"},
      {"examples/mlp_classifier.lean", "mlp_digits_wide_deep"},
      {"examples/linear_cross_entropy.lean", "linear_cross_entropy_8k"},
      {"examples/causal_attention.lean", "causal_attention_4k"},
  };
  for (size_t i = 0; i < sizeof timed / sizeof timed[0]; i++) run_timing(timed[i][0], timed[i][1]);
  run_budget("examples/transformer_lm.lean", "lm_small", 100);
  run_deep();
  printf("%d passed, %d failed\n", npass, nfail);
  return nfail ? 1 : 0;
}
