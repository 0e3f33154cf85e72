/* test_planted_search.c: verify catches bugs planted in what the plan search
 * emits.  The fused kernels the search finds carry streamed state across
 * key tiles (online softmax), split a reduction across blocks with a
 * combine kernel (split-KV, split-K), bound a loop by the mask (causal) and
 * specialize the tiles a mask leaves whole.  Each of those is a place a
 * lowering bug would hide: a merge that forgets to rescale, a loop that
 * stops one tile short, a combine that drops a block's partial or its
 * rescaling, a diagonal tile taken as unmasked.  The tile program of the
 * real search is built here, checked to pass verify as emitted, then edited
 * in one place per bug; verify must fail each edit, naming the kernel at
 * fault (for a kernel that writes partials, the combine that reads them,
 * with the writer named). */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/front/front.h"
#include "../../src/search/search.h"
#include "../../src/verify/verify.h"
#include "unit.h"

typedef struct PEnv {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Program prog;
  TileProgram *tp;
  Plan *plan;
  SearchStats st;
} PEnv;

/* The tile program of entry "f" of src at the given sizes, of the search's
   choice (candidate 0) or its candidate-th runner-up (NULL if it has none:
   e->st.ncands says how many it priced). */
static TileProgram *searched_cand(PEnv *e, const char *src, SizeArg *sizes, int nsizes, int candidate) {
  memset(e, 0, sizeof *e);
  e->a = arena_new();
  ctx_init(&e->c, e->a, stderr);
  e->c.unwind = &e->jb;
  SrcFile *f = src_from_string(e->a, "planted.lean", src, strlen(src));
  if (setjmp(e->jb)) return NULL;
  front_load(&e->c, &e->prog, f);
  Graph *g = elab_entry(&e->c, &e->prog, "f", (Pos){0}, sizes, nsizes);
  RewriteInfo ri;
  g = search_rewrite(g, sizes, nsizes, &ri);
  SearchOpts so = {.candidate = candidate};
  e->plan = plan_search(g, DT_BF16, &so, &e->st);
  e->tp = e->plan ? tile_lower_plan(e->plan) : NULL;
  return e->tp && tile_check(e->tp, stderr) ? e->tp : NULL;
}

static TileProgram *searched(PEnv *e, const char *src, SizeArg *sizes, int nsizes) {
  return searched_cand(e, src, sizes, nsizes, 0);
}

static bool trial(PEnv *e, VerifyInput kind, uint64_t seed, VerifyResult *res) {
  Graph *g = e->tp->g;
  Tensor **in = calloc((size_t)g->ninputs + 1, sizeof *in);
  volatile bool ok = false;
  if (setjmp(e->jb) == 0) {
    verify_inputs(g, e->tp->dtype, kind, seed, in);
    ok = verify_trial(e->tp, in, false, res);
  } else {
    snprintf(res->msg, sizeof res->msg, "unwound");
  }
  for (int i = 0; i < g->ninputs; i++) tensor_free(in[i]);
  free(in);
  return ok;
}

/* Normal inputs (two seeds), large ones, a ramp and wide integers (large
   logits with a tight bound): all pass? The first failure in *res. */
static bool passes(PEnv *e, VerifyResult *res) {
  return trial(e, VIN_NORMAL, 11, res) && trial(e, VIN_NORMAL, 12, res) && trial(e, VIN_LARGE, 13, res) &&
         trial(e, VIN_RAMP, 14, res) && trial(e, VIN_WIDE_INTEGERS, 15, res);
}

static Kernel *kernel_of_kind(TileProgram *tp, KernelKind kind) {
  for (int i = 0; i < tp->kernels.len; i++)
    if (tp->kernels.data[i]->kind == kind) return tp->kernels.data[i];
  return NULL;
}

/* The first (or last) statement of a kind in a list, not descending. */
static Stmt *stmt_of_kind(StmtList *l, StmtKind kind, bool last) {
  Stmt *r = NULL;
  for (int i = 0; i < l->len; i++)
    if (l->data[i]->kind == kind && (!r || last)) r = l->data[i];
  return r;
}

/* Stop a loop one trip short. */
static void one_short(PEnv *e, Stmt *loop) { loop->hi = sx_idx(e->a, IX_SUB, loop->hi, sx_int(e->a, 1)); }

/* In a loop body: the map that rescales an accumulator the loop's gemm adds
   into (dst := dst * factor). */
static int rescale_of_gemm(Stmt *loop) {
  for (int i = 0; i < loop->body.len; i++) {
    Stmt *s = loop->body.data[i];
    if (s->kind != ST_MAP || !s->value || s->value->kind != SX_OP || s->value->op != OP_MUL) continue;
    SExpr *x = s->value->a[0];
    if (x->kind != SX_TILE || x->buf != s->dst) continue;
    for (int j = i + 1; j < loop->body.len; j++)
      if (loop->body.data[j]->kind == ST_GEMM && loop->body.data[j]->dst == s->dst) return i;
  }
  return -1;
}

static void remove_stmt(StmtList *l, int at) {
  for (int i = at; i + 1 < l->len; i++) l->data[i] = l->data[i + 1];
  l->len--;
}

/* In a combine loop: acc := acc + outer(part, inner(...)) becomes
   acc := acc + part (a rescale: outer mul, inner exp; Chan's term: outer
   add, inner div). */
static bool drop_combine_term(Stmt *loop, Op outer, Op inner) {
  for (int i = 0; i < loop->body.len; i++) {
    Stmt *s = loop->body.data[i];
    SExpr *v = s->kind == ST_MAP ? s->value : NULL;
    if (!v || v->kind != SX_OP || v->op != OP_ADD) continue;
    SExpr *m = v->a[1];
    if (m->kind == SX_OP && m->op == outer && m->a[1]->kind == SX_OP && m->a[1]->op == inner) {
      v->a[1] = m->a[0];
      return true;
    }
  }
  return false;
}

/* Does a failure name kernel `at`?  A fault in a kernel that writes partials
   shows where they are combined, and verify names the kernel that wrote them. */
static bool names(const VerifyResult *res, const Kernel *at) {
  return res->kernel == at || (res->kernel && strstr(res->msg, "combines the partials") && strstr(res->msg, at->name));
}

/* The program as searched passes. */
static void expect_passes(PEnv *e) {
  VerifyResult res;
  bool ok = passes(e, &res);
  CHECK(ok);
  if (!ok) fprintf(stderr, "  as searched: %s\n", res.msg);
}

static void expect_caught(PEnv *e, const Kernel *at, const char *what) {
  VerifyResult res;
  bool ok = passes(e, &res);
  CHECK(!ok);
  bool named = names(&res, at);
  CHECK(named);
  if (ok || !named || getenv("VERIFY_SHOW")) fprintf(stderr, "  %s: %s\n", what, ok ? "all passed" : res.msg);
}

static const char *attn_src = "def f (N D : Nat) (q k v : Tensor [N, D]) : Tensor [N, D] :=\n"
                              "  softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v\n";
static const char *causal_src = "def f (N D : Nat) (q k v : Tensor [N, D]) : Tensor [N, D] :=\n"
                                "  softmax (causalMask ((q ⬝ kᵀ) / sqrt D)) ⬝ v\n";
/* layer norm of rows whose first 256 elements sit 100 above the rest */
static const char *shifted_ln_src = "def f (M N : Nat) (x : Tensor [M, N]) (w b : Param [N]) : Tensor [M, N] :=\n"
                                    "  layernorm (x + 100 * cast (iota N < 256)) w b\n";
static const char *splitk_src = "def f (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] :=\n"
                                "  a ⬝ b\n";

TEST(planted_search_attention_split_kv) {
  for (int bug = -1; bug < 5; bug++) {
    PEnv e;
    SizeArg sizes[2] = {{"N", 1024, false}, {"D", 16, false}};
    TileProgram *tp = searched(&e, attn_src, sizes, 2);
    REQUIRE(tp);
    Kernel *fused = kernel_of_kind(tp, KERNEL_FUSED), *comb = kernel_of_kind(tp, KERNEL_COMBINE);
    /* the shape this test plants bugs in: a key loop in the fused kernel,
       a combine of the blocks' partials */
    REQUIRE(fused && comb);
    Stmt *loop = stmt_of_kind(&fused->body, ST_LOOP, false);
    REQUIRE(loop);
    Stmt *cloop = stmt_of_kind(&comb->body, ST_LOOP, true);
    REQUIRE(cloop);
    int rs = rescale_of_gemm(loop);
    REQUIRE(rs >= 0);
    switch (bug) {
    case -1: expect_passes(&e); break;
    case 0: remove_stmt(&loop->body, rs); expect_caught(&e, fused, "merge without rescale"); break;
    case 1: one_short(&e, loop); expect_caught(&e, fused, "key loop one tile short"); break;
    case 2: one_short(&e, cloop); expect_caught(&e, comb, "combine drops a partial"); break;
    case 3: REQUIRE(drop_combine_term(cloop, OP_MUL, OP_EXP)); expect_caught(&e, comb, "combine without rescale"); break;
    case 4: /* the running max not carried: each tile's max taken alone */
      for (int i = 0; i < loop->body.len; i++)
        if (loop->body.data[i]->kind == ST_REDUCE && loop->body.data[i]->reduce_op == OP_AMAX)
          loop->body.data[i]->clear = true;
      expect_caught(&e, fused, "running max cleared per tile");
      break;
    }
    arena_free(e.a);
  }
}

/* The searched program's fused kernel (in *fused) and its first loop, the
   key loop (NULL if the search did not give them). */
static Stmt *fused_loop(PEnv *e, const char *src, SizeArg *sizes, int nsizes, Kernel **fused) {
  TileProgram *tp = searched(e, src, sizes, nsizes);
  *fused = tp ? kernel_of_kind(tp, KERNEL_FUSED) : NULL;
  return *fused ? stmt_of_kind(&(*fused)->body, ST_LOOP, false) : NULL;
}

/* ... of attention at N 1024, D 16 */
static Stmt *attention_key_loop(PEnv *e, Kernel **fused) {
  SizeArg sizes[2] = {{"N", 1024, false}, {"D", 16, false}};
  return fused_loop(e, attn_src, sizes, 2, fused);
}

/* In a loop body: the exponent of the map that computes a rescale factor
   (rho := exp(prev - new)), or NULL. */
static SExpr **rescale_exponent(Stmt *loop) {
  for (int i = 0; i < loop->body.len; i++) {
    Stmt *s = loop->body.data[i];
    if (s->kind == ST_MAP && s->dst && !strncmp(s->dst->name, "rho", 3) && s->value->kind == SX_OP &&
        s->value->op == OP_EXP)
      return &s->value->a[0];
  }
  return NULL;
}

/* A rescale 10% off (exp(0.9 (prev - new))) changes the result by a few
   percent where the running max moves far; normal(0, 1) scores move it
   little, and large, masked and extreme inputs make the error bound
   vacuous (verify's earlier kinds all passed this bug).  The ramp kind
   (magnitudes rising along the keys) moves the max at most tiles with
   every element's bound meaningful, and catches it. */
TEST(planted_search_rescale_off_caught_by_ramp) {
  PEnv e;
  Kernel *fused;
  Stmt *loop = attention_key_loop(&e, &fused);
  REQUIRE(loop);
  VerifyResult res;
  CHECK(trial(&e, VIN_RAMP, 14, &res));
  CHECK(res.elements > 0 && res.unverifiable * 20 <= res.elements); /* the check means something */
  SExpr **x = rescale_exponent(loop);
  REQUIRE(x);
  *x = sx_op(e.a, OP_MUL, EK_REAL, (SExpr *[]){*x, sx_real(e.a, 0.9)}, 2);
  bool ok = trial(&e, VIN_RAMP, 14, &res);
  CHECK(!ok && names(&res, fused));
  if (ok || getenv("VERIFY_SHOW")) fprintf(stderr, "  rescale 10%% off, ramp: %s\n", ok ? "passed" : res.msg);
  arena_free(e.a);
}

/* A row's own positive factor in the exponent (exp(F·(y − max y)) with F
   = exp r · 10, the form the rewrites leave when a positive row scale is
   pulled out of the max): the rescale must carry F, exp(F·(prev − new)).
   Without it the running sum is rescaled as if F were 1. */
static const char *row_scaled_src = "def f (M N : Nat) (x : Tensor [M, N]) (r : Tensor [M, 1]) : Tensor [M, N] :=\n"
                                    "  softmax (x * exp r * 10.0)\n";

TEST(planted_search_row_factor_dropped) {
  PEnv e;
  Kernel *fused;
  SizeArg sizes[2] = {{"M", 4, false}, {"N", 40000, false}};
  Stmt *loop = fused_loop(&e, row_scaled_src, sizes, 2, &fused);
  REQUIRE(loop);
  VerifyResult res;
  CHECK(trial(&e, VIN_RAMP, 3, &res));
  SExpr **x = rescale_exponent(loop);
  REQUIRE(x);
  /* exp(select(prev = −∞, −∞, (prev − new) · F)): keep prev − new alone */
  REQUIRE((*x)->kind == SX_OP && (*x)->op == OP_SELECT && (*x)->a[2]->kind == SX_OP && (*x)->a[2]->op == OP_MUL);
  (*x)->a[2] = (*x)->a[2]->a[0];
  bool ok = trial(&e, VIN_RAMP, 3, &res);
  CHECK(!ok && names(&res, fused));
  if (ok || getenv("VERIFY_SHOW")) fprintf(stderr, "  row factor dropped, ramp: %s\n", ok ? "passed" : res.msg);
  arena_free(e.a);
}

/* In a combine's loop: the merge of a law state whose rescale carries a
   row's factor, exp(select(D_c = identity, -inf, (D_c - D) * F)): F
   dropped.  False if there is none. */
static bool drop_combine_row_factor(Stmt *loop) {
  for (int i = 0; i < loop->body.len; i++) {
    Stmt *s = loop->body.data[i];
    SExpr *v = s->kind == ST_MAP ? s->value : NULL;
    if (!v || v->kind != SX_OP || v->op != OP_ADD) continue;
    SExpr *m = v->a[1];
    if (m->kind != SX_OP || m->op != OP_MUL || m->a[1]->kind != SX_OP || m->a[1]->op != OP_EXP) continue;
    SExpr *sel = m->a[1]->a[0];
    if (sel->kind == SX_OP && sel->op == OP_SELECT && sel->a[2]->kind == SX_OP && sel->a[2]->op == OP_MUL) {
      sel->a[2] = sel->a[2]->a[0];
      return true;
    }
  }
  return false;
}

/* The same softmax split across blocks (two rows of 100000): each chunk
   stores the row's factor beside its partials, and the combine rescales
   each chunk's sum by exp(F·(D_chunk − D)). */
TEST(planted_search_row_factor_split) {
  for (int bug = -1; bug < 1; bug++) {
    PEnv e;
    SizeArg sizes[2] = {{"M", 2, false}, {"N", 100000, false}};
    TileProgram *tp = searched(&e, row_scaled_src, sizes, 2);
    REQUIRE(tp);
    Kernel *comb = kernel_of_kind(tp, KERNEL_COMBINE);
    REQUIRE(comb);
    Stmt *cloop = stmt_of_kind(&comb->body, ST_LOOP, true);
    REQUIRE(cloop);
    if (bug < 0) expect_passes(&e);
    else {
      REQUIRE(drop_combine_row_factor(cloop));
      expect_caught(&e, comb, "combine without the row's factor");
    }
    arena_free(e.a);
  }
}

TEST(planted_search_causal_mask) {
  for (int bug = -1; bug < 2; bug++) {
    PEnv e;
    SizeArg sizes[2] = {{"N", 512, false}, {"D", 16, false}};
    Kernel *fused;
    Stmt *loop = fused_loop(&e, causal_src, sizes, 2, &fused);
    REQUIRE(loop);
    Stmt *spec = stmt_of_kind(&loop->body, ST_IF, false);
    REQUIRE(spec && spec->specialize);
    switch (bug) {
    case -1: expect_passes(&e); break;
    case 0: /* every tile taken as wholly unmasked, the diagonal included */
      spec->cond = sx_int(e.a, 1);
      expect_caught(&e, fused, "diagonal tile unmasked");
      break;
    case 1: one_short(&e, loop); expect_caught(&e, fused, "diagonal tile skipped"); break;
    }
    arena_free(e.a);
  }
}

TEST(planted_search_split_k) {
  for (int bug = -1; bug < 1; bug++) {
    PEnv e;
    SizeArg sizes[3] = {{"M", 16, false}, {"K", 32768, false}, {"N", 16, false}};
    TileProgram *tp = searched(&e, splitk_src, sizes, 3);
    REQUIRE(tp);
    Kernel *comb = kernel_of_kind(tp, KERNEL_COMBINE);
    REQUIRE(comb);
    Stmt *cloop = stmt_of_kind(&comb->body, ST_LOOP, true);
    REQUIRE(cloop);
    if (bug < 0) {
      expect_passes(&e);
    } else {
      one_short(&e, cloop);
      expect_caught(&e, comb, "split-K combine drops a partial");
    }
    arena_free(e.a);
  }
}

/* A program the rewrite reduces to its input (split heads, then merge them)
   still writes its output: a copy kernel.  Without one the output holds
   whatever the allocator left there, and verify must say so. */
TEST(planted_search_output_never_written) {
  static const char *src = "def f (x : Tensor [2, 3, 8]) : Tensor [2, 3, 8] :=\n"
                           "  mergeHeads 2 3 4 2 (splitHeads 2 3 4 2 x)\n";
  for (int bug = -1; bug < 1; bug++) {
    PEnv e;
    TileProgram *tp = searched(&e, src, NULL, 0);
    REQUIRE(tp);
    CHECK(tp->kernels.len == 1);
    VerifyResult res;
    if (bug < 0) {
      CHECK(passes(&e, &res));
    } else {
      tp->kernels.len = 0;
      CHECK(!passes(&e, &res));
      CHECK(strstr(res.msg, "no kernel writes the output") != NULL);
    }
    arena_free(e.a);
  }
}

/* `--candidate k`: the search's k-th runner-up is rebuilt from its
   partition, with as many planned kernels as the search priced it with, and is as
   correct as the choice (verify passes it). */
TEST(search_runner_up_plans_rebuild_and_verify) {
  static const char *src = "def f (M K N : Nat) (x : Tensor [M, K]) (w b : Param [K]) (W : Param [K, N]) : Tensor [M, N] :=\n"
                           "  layernorm x w b ⬝ W\n";
  SizeArg sizes[3] = {{"M", 64, false}, {"K", 512, false}, {"N", 64, false}};
  int ncands = -1;
  for (int k = 1; k <= SEARCH_MAX_CANDS && (ncands < 0 || k <= ncands); k++) {
    PEnv e;
    TileProgram *tp = searched_cand(&e, src, sizes, 3, k);
    ncands = e.st.ncands;
    REQUIRE(ncands >= 2); /* a layer norm before a product: fused or not, at least */
    REQUIRE(tp);
    /* the kernels the candidate list says: the tile program's, a split's combine included */
    CHECK(tp->kernels.len == e.st.cands[k - 1].kernels);
    VerifyResult res;
    bool ok = passes(&e, &res);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  candidate %d (%s): %s\n", k, e.st.cands[k - 1].what, res.msg);
    arena_free(e.a);
  }
}

/* The shift law: layer norm over a row too long to hold streams its
   variance in the pass of its mean (Welford, a tile at a time).  Without
   the correction a changed running mean owes the sum of squares, the
   variance is wrong: verify must fail it.  The correction is worth
   about T/n_seen of a tile's deviation from the running mean (each tile's
   terms use the mean that includes it), so with stationary data it is
   lost in rounding; the row here starts with a tile 100 above the rest,
   which the running mean forgets only through the corrections (without
   them the variance comes out about a third too small). */
TEST(planted_search_mean_shift) {
  for (int bug = -1; bug < 1; bug++) {
    PEnv e;
    SizeArg sizes[2] = {{"M", 4, false}, {"N", 20000, false}};
    TileProgram *tp = searched(&e, shifted_ln_src, sizes, 2);
    REQUIRE(tp);
    REQUIRE(tp->kernels.len == 1);
    Kernel *k = tp->kernels.data[0];
    Stmt *loop = stmt_of_kind(&k->body, ST_LOOP, false);
    REQUIRE(loop);
    /* the correction: q := q + (...) right before q's reduction, in the same loop */
    int corr = -1;
    for (int i = 0; i + 1 < loop->body.len; i++) {
      Stmt *s = loop->body.data[i];
      if (s->kind == ST_MAP && s->value->kind == SX_OP && s->value->op == OP_ADD && s->value->a[0]->kind == SX_TILE &&
          s->value->a[0]->buf == s->dst)
        for (int j = i + 1; j < loop->body.len; j++)
          if (loop->body.data[j]->kind == ST_REDUCE && loop->body.data[j]->dst == s->dst) corr = i;
    }
    REQUIRE(corr >= 0);
    if (bug < 0) {
      expect_passes(&e);
    } else {
      remove_stmt(&loop->body, corr);
      expect_caught(&e, k, "running mean moved without the correction");
    }
    arena_free(e.a);
  }
}

/* Attention sinks beside a sliding window: the key loop visits the sink
   tile, then jumps over the tiles no query of the block sees to the
   window's.  Jumping one tile too far, or stopping one short, must fail. */
TEST(planted_search_sink_window_gap) {
  static const char *src = "def f (N D W S : Nat) (q k v : Tensor [N, D]) : Tensor [N, D] :=\n"
                           "  let i := reshape (iota N) [N, 1]\n"
                           "  let j := reshape (iota N) [1, N]\n"
                           "  let s := (q ⬝ kᵀ) / sqrt D\n"
                           "  softmax (select (j ≤ i) (select (j < S) s (select (i < j + W) s neginf)) neginf) ⬝ v\n";
  for (int bug = -1; bug < 2; bug++) {
    PEnv e;
    SizeArg sizes[4] = {{"N", 1024, false}, {"D", 16, false}, {"W", 256, false}, {"S", 4, false}};
    Kernel *fused;
    Stmt *loop = fused_loop(&e, src, sizes, 4, &fused);
    REQUIRE(loop);
    /* the loop skips tiles: fewer trips than key tiles */
    CHECK(tile_loop_trips_max(fused, loop) < 1024 / 128);
    if (bug < 0) {
      expect_passes(&e);
    } else if (bug == 0) { /* past the sink tile, every tile one further */
      SExpr *k = sx_var(e.a, TV_K), *repl[TV_COUNT] = {0};
      repl[TV_K] = sx_idx(e.a, IX_ADD, k, sx_idx(e.a, IX_MIN, k, sx_int(e.a, 1)));
      tile_subst_list(e.a, &loop->body, repl);
      expect_caught(&e, fused, "the gap one tile too wide");
    } else {
      one_short(&e, loop);
      expect_caught(&e, fused, "the window's last tile dropped");
    }
    arena_free(e.a);
  }
}

/* Chunked attention (i / C == j / C): the key loop spans the query
   block's chunks and tiles wholly inside one chunk skip the mask.  C = 192
   is not a multiple of the 128-key tiles, so chunks start inside tiles. */
TEST(planted_search_chunk_mask) {
  static const char *src = "def f (N D C : Nat) (q k v : Tensor [N, D]) : Tensor [N, D] :=\n"
                           "  let i := reshape (iota N) [N, 1]\n"
                           "  let j := reshape (iota N) [1, N]\n"
                           "  softmax (select (i / C == j / C) ((q ⬝ kᵀ) / sqrt D) neginf) ⬝ v\n";
  for (int bug = -1; bug < 3; bug++) {
    PEnv e;
    SizeArg sizes[3] = {{"N", 1024, false}, {"D", 16, false}, {"C", 192, false}};
    Kernel *fused;
    Stmt *loop = fused_loop(&e, src, sizes, 3, &fused);
    REQUIRE(loop);
    CHECK(tile_loop_trips_max(fused, loop) < 1024 / 128);
    Stmt *spec = stmt_of_kind(&loop->body, ST_IF, false);
    if (bug < 0) {
      expect_passes(&e);
    } else if (bug == 0) {
      one_short(&e, loop);
      expect_caught(&e, fused, "the chunk's last key tile dropped");
    } else if (bug == 1) { /* the loop starts one tile late */
      loop->lo = sx_idx(e.a, IX_ADD, loop->lo, sx_int(e.a, 1));
      expect_caught(&e, fused, "the chunk's first key tile dropped");
    } else {
      REQUIRE(spec && spec->specialize);
      spec->cond = sx_int(e.a, 1);
      expect_caught(&e, fused, "tiles across a chunk boundary unmasked");
    }
    arena_free(e.a);
  }
}

/* Layer norm over a row split across blocks: each block's squared
   deviations are about its own chunk's mean, and the combine adds
   n_c (m_c - m)² per chunk (Chan).  The row's first 256 elements sit 100
   above the rest, so the chunks' means differ and the term matters. */
TEST(planted_search_chan_merge) {
  for (int bug = -1; bug < 1; bug++) {
    PEnv e;
    SizeArg sizes[2] = {{"M", 1, false}, {"N", 100000, false}};
    TileProgram *tp = searched(&e, shifted_ln_src, sizes, 2);
    REQUIRE(tp);
    Kernel *fused = kernel_of_kind(tp, KERNEL_FUSED), *comb = kernel_of_kind(tp, KERNEL_COMBINE);
    REQUIRE(fused && comb);
    if (bug < 0) {
      expect_passes(&e);
    } else {
      bool planted = false;
      for (int i = 0; i < comb->body.len && !planted; i++)
        if (comb->body.data[i]->kind == ST_LOOP) planted = drop_combine_term(comb->body.data[i], OP_ADD, OP_DIV);
      REQUIRE(planted);
      expect_caught(&e, fused, "combine without Chan's between-chunk term");
    }
    arena_free(e.a);
  }
}

/* Layer norm's mean and variance kept lane by lane (lower_plan.c's
   lane-wise Welford): every lane updates its own mean and squares a trip,
   weighted t/(t+1), and after the loop the lanes of a row merge by Chan's
   rule with the between-lane term T sum_l (m_l - m)^2.  The row's first 256
   elements sit 100 above the rest, all in the first tile: the lanes'
   running means move, and Welford's weight matters; in the second program
   every even element sits 100 above the odd ones, so the lanes' means
   differ by 100 and the between-lane term is nearly the whole variance. */
static const char *alternating_ln_src = "def f (M N : Nat) (x : Tensor [M, N]) (w b : Param [N]) : Tensor [M, N] :=\n"
                                        "  layernorm (x + 100 * cast (iota N - iota N / 2 * 2 < 1)) w b\n";

static Stmt *lane_map(StmtList *l, bool in_loop) {
  for (int i = 0; i < l->len; i++) {
    Stmt *s = l->data[i];
    if (s->kind == ST_LOOP && in_loop) {
      Stmt *m = lane_map(&s->body, false);
      if (m) return m;
    }
    if (!in_loop && s->kind == ST_MAP && !strncmp(s->dst->name, "LQ", 2)) return s;
  }
  return NULL;
}

TEST(planted_search_lane_welford) {
  for (int bug = -2; bug < 2; bug++) { /* -2, -1: the two programs as searched */
    PEnv e;
    SizeArg sizes[2] = {{"M", 4, false}, {"N", 32768, false}};
    TileProgram *tp = searched(&e, bug == 1 || bug == -2 ? alternating_ln_src : shifted_ln_src, sizes, 2);
    REQUIRE(tp);
    REQUIRE(tp->kernels.len == 1);
    Kernel *k = tp->kernels.data[0];
    Stmt *upd = lane_map(&k->body, true), *merge = lane_map(&k->body, false);
    /* the shape this test plants bugs in: LQ := LQ + w * dev^2 in the loop,
       LQ := LQ + T * (m_l - m)^2 after it */
    REQUIRE(upd && merge && upd != merge);
    REQUIRE(upd->value->kind == SX_OP && upd->value->op == OP_ADD && upd->value->a[1]->kind == SX_OP);
    REQUIRE(merge->value->kind == SX_OP && merge->value->op == OP_ADD);
    if (bug < 0) {
      expect_passes(&e);
    } else if (bug == 0) {
      upd->value->a[1] = upd->value->a[1]->a[1]; /* Welford's weight t/(t+1) dropped */
      expect_caught(&e, k, "lane update without Welford's weight");
    } else {
      merge->value = merge->value->a[0]; /* the lanes' squares summed without the between-lane term */
      expect_caught(&e, k, "lanes merged without Chan's between-lane term");
    }
    arena_free(e.a);
  }
}

/* TS_ONE_EXP=1 (experimental): the probabilities computed once in float32
   for the row sum, their storage-type copy for P V; the program must still
   pass verify, and the key loop holds one exp map fewer. */
static int count_exp_maps(const StmtList *l) {
  int n = 0;
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->kind == ST_MAP && s->value && s->value->kind == SX_OP && s->value->op == OP_EXP && s->dst->shape.rank == 2) n++;
    n += count_exp_maps(&s->body) + count_exp_maps(&s->orelse);
  }
  return n;
}

TEST(one_exp_per_score_passes_verify) {
  int exps[2] = {0, 0};
  for (int one = 0; one < 2; one++) {
    if (one) setenv("TS_ONE_EXP", "1", 1);
    PEnv e;
    SizeArg sizes[2] = {{"N", 1024, false}, {"D", 16, false}};
    TileProgram *tp = searched(&e, attn_src, sizes, 2);
    unsetenv("TS_ONE_EXP");
    REQUIRE(tp);
    Kernel *fused = kernel_of_kind(tp, KERNEL_FUSED);
    REQUIRE(fused);
    exps[one] = count_exp_maps(&fused->body);
    VerifyResult res;
    bool ok = passes(&e, &res);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  one exp %d: %s\n", one, res.msg);
    arena_free(e.a);
  }
  CHECK(exps[1] == exps[0] - 1);
}

/* The key loop's running max may drop NaNs (Stmt.nan_ok: no second
   reduction per tile): every output reading it also reads the row sum of
   exp(s - max), which a NaN score makes NaN.  A NaN in one query row must
   still give exactly that row NaN, as the graph (PyTorch) does. */
TEST(nan_dropping_max_keeps_nan_rows) {
  PEnv e;
  Kernel *fused;
  Stmt *loop = attention_key_loop(&e, &fused);
  REQUIRE(loop);
  bool dropping = false;
  for (int i = 0; i < loop->body.len; i++)
    dropping |= loop->body.data[i]->kind == ST_REDUCE && loop->body.data[i]->reduce_op == OP_AMAX &&
                loop->body.data[i]->nan_ok;
  CHECK(dropping);
  TileProgram *tp = e.tp;
  Graph *g = tp->g;
  Tensor **in = calloc((size_t)g->ninputs + 1, sizeof *in);
  if (setjmp(e.jb) == 0) {
    verify_inputs(g, tp->dtype, VIN_NORMAL, 5, in);
    in[0]->data[5 * 16 + 3] = NAN; /* q[5, 3] */
    TileFault f;
    Tensor *got = tile_run(tp, in, NULL, &f), *want = interp_run(g, in);
    REQUIRE(got && want);
    int64_t n = shape_numel(&want->shape), same = 0, nans = 0;
    for (int64_t i = 0; i < n; i++) {
      same += isnan(got->data[i]) == isnan(want->data[i]);
      nans += isnan(want->data[i]);
    }
    CHECK(same == n);
    CHECK(nans == 16); /* the row of q[5] */
    tensor_free(got);
    tensor_free(want);
  }
  for (int i = 0; i < g->ninputs; i++) tensor_free(in[i]);
  free(in);
  arena_free(e.a);
}
