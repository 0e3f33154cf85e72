/* test_tile.c: the tile interpreter and verify.
 *
 * The tile interpreter agrees with the graph interpreter on every definition
 * of tests/prims.lean (one per primitive and prelude function: each op class,
 * broadcasting, layout ops, gathers) and on the examples' kernel shapes
 * (softmax, attention, layernorm) with and without tails.  Then wrong
 * lowerings are planted in tile programs made by tile_lower (an off-by-one
 * mask bound, a loop one trip short, a missing max subtraction, a reduction
 * over the wrong axis, a dropped tail mask, a wrong identity for masked-off
 * elements) and verify must report each as a failure naming the mutated
 * kernel, while the unmutated program passes.  Faults (an out-of-bounds
 * store) are reported with kernel and statement. */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/front/front.h"
#include "../../src/verify/verify.h"
#include "unit.h"

typedef struct TEnv {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Program prog;
  Graph *g;
} TEnv;

/* Elaborate `entry` of src (or of the file at path when src is NULL) with
   sizes "A=1,B=2"; NULL on an error (e is set up either way). */
static Graph *elab(TEnv *e, const char *src, const char *path, const char *entry, const char *spec) {
  memset(e, 0, sizeof *e);
  e->a = arena_new();
  ctx_init(&e->c, e->a, stderr);
  e->c.unwind = &e->jb;
  SizeArg sizes[16];
  int ns = 0;
  char buf[256] = "";
  if (spec) snprintf(buf, sizeof buf, "%s", spec);
  for (char *t = buf[0] ? strtok(buf, ",") : NULL; t && ns < 16; t = strtok(NULL, ",")) {
    char *eq = strchr(t, '=');
    *eq = 0;
    sizes[ns++] = (SizeArg){arena_strdup(e->a, t), atoll(eq + 1), false};
  }
  char err[256];
  SrcFile *f = src ? src_from_string(e->a, "t.lean", src, strlen(src)) : src_load(e->a, path, err, sizeof err);
  if (!f) return NULL;
  if (setjmp(e->jb)) return NULL;
  front_load(&e->c, &e->prog, f);
  if (!entry) return NULL;
  e->g = elab_entry(&e->c, &e->prog, entry, (Pos){0}, sizes, ns);
  return e->g;
}

static void env_free(TEnv *e) { arena_free(e->a); }

/* One trial of tp on inputs of `kind`. */
static bool trial(TEnv *e, const TileProgram *tp, VerifyInput kind, uint64_t seed, VerifyResult *res) {
  Graph *g = tp->g;
  Tensor **in = calloc((size_t)g->ninputs + 1, sizeof *in);
  volatile bool ok = false;
  if (setjmp(e->jb) == 0) {
    verify_inputs(g, tp->dtype, kind, seed, in);
    ok = verify_trial(tp, in, true, res);
  } else {
    snprintf(res->msg, sizeof res->msg, "unwound");
    res->pass = false;
  }
  for (int i = 0; i < g->ninputs; i++) tensor_free(in[i]);
  free(in);
  return ok;
}

/* Every input kind (normal with three seeds); true if all pass, else the
   first failure is in *res. */
static bool all_kinds(TEnv *e, const TileProgram *tp, VerifyResult *res) {
  for (int s = 0; s < 3; s++)
    if (!trial(e, tp, VIN_NORMAL, (uint64_t)s, res)) return false;
  for (int k = 1; k < VIN_COUNT; k++)
    if (!trial(e, tp, (VerifyInput)k, 7, res)) return false;
  return true;
}

static Kernel *kernel_named(const TileProgram *tp, const char *suffix) {
  for (int k = 0; k < tp->kernels.len; k++) {
    const char *n = tp->kernels.data[k]->name;
    size_t a = strlen(n), b = strlen(suffix);
    if (a >= b && !strcmp(n + a - b, suffix)) return tp->kernels.data[k];
  }
  return NULL;
}

/* Expect a failure of tp that names kernel k. */
static void expect_caught(TEnv *e, const TileProgram *tp, const Kernel *k) {
  VerifyResult res;
  bool ok = all_kinds(e, tp, &res);
  CHECK(!ok);
  CHECK(res.kernel == k);
  CHECK(k && strstr(res.msg, k->name) != NULL);
  if (ok || res.kernel != k || getenv("VERIFY_SHOW")) fprintf(stderr, "  verify said: %s\n", ok ? "all passed" : res.msg);
}

typedef struct Find { StmtKind kind; const Stmt *hit; } Find;

static bool find_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Find *f = ud;
  if (s->kind == f->kind) f->hit = s;
  return !f->hit;
}

/* The first statement of kind `kind` in the kernel's tree. */
static Stmt *stmt_of(Kernel *k, StmtKind kind) {
  Find f = {kind, NULL};
  tile_walk(&k->body, find_stmt, &f);
  return (Stmt *)f.hit;
}

/* In expression e, the integer constant compared against (x < C) equal to
   `want`; NULL if none. */
static SExpr *bound_const(SExpr *e, int64_t want) {
  if (!e) return NULL;
  if (e->kind == SX_IDX && e->iop == IX_LT && e->a[1]->kind == SX_INT && e->a[1]->i == want) return e->a[1];
  for (int i = 0; i < 3 && i < (e->kind == SX_OP || e->kind == SX_IDX ? e->n : 0); i++) {
    SExpr *r = bound_const(e->a[i], want);
    if (r) return r;
  }
  return NULL;
}

/* The first SX_OP with op `op` in e. */
static SExpr *find_op(SExpr *e, Op op) {
  if (!e) return NULL;
  if (e->kind == SX_OP && e->op == op) return e;
  if (e->kind == SX_OP || e->kind == SX_IDX)
    for (int i = 0; i < e->n && i < 3; i++) {
      SExpr *r = find_op(e->a[i], op);
      if (r) return r;
    }
  return NULL;
}

/* The first load in e. */
static SExpr *find_load(SExpr *e) {
  if (!e) return NULL;
  if (e->kind == SX_LOAD) return e;
  if (e->kind == SX_OP || e->kind == SX_IDX)
    for (int i = 0; i < e->n && i < 3; i++) {
      SExpr *r = find_load(e->a[i]);
      if (r) return r;
    }
  return NULL;
}

static const char *softmax_src =
    "def rowSoftmax (M N : Nat) (x : Tensor [M, N]) : Tensor [M, N] := softmax x\n";

/* ---- agreement ---- */

TEST(tile_prims_agree_with_graph) {
  TEnv e;
  elab(&e, NULL, "tests/prims.lean", NULL, NULL);
  REQUIRE(e.prog.ndecls > 0);
  int checked = 0;
  for (int i = 0; i < e.prog.ndecls; i++) {
    const Decl *d = e.prog.decls[i];
    if (d->file->is_prelude) continue;
    Arena *scratch = arena_new();
    e.c.arena = scratch;
    e.c.err = NULL;
    Graph *volatile g = NULL;
    if (setjmp(e.jb) == 0) g = elab_entry(&e.c, &e.prog, d->name, (Pos){0}, NULL, 0);
    e.c.err = stderr;
    if (g) {
      DType dts[3] = {DT_BF16, DT_F16, DT_F32};
      for (int t = 0; t < 3; t++) {
        TileProgram *tp = tile_lower(g, dts[t]);
        CHECK(tile_check(tp, stderr));
        VerifyResult res;
        bool ok = trial(&e, tp, VIN_NORMAL, 1, &res) && trial(&e, tp, VIN_EXTREME, 2, &res);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s (%s): %s\n", d->name, dtype_name(dts[t]), res.msg);
      }
      checked++;
    }
    e.c.arena = e.a;
    arena_free(scratch);
  }
  CHECK(checked > 50);
  env_free(&e);
}

/* Sizes with and without tails; each case's naive program is handed to fn. */
static const struct { const char *src, *entry, *sizes; } tail_cases[] = {
    {NULL, "rowSoftmax", "M=5,N=37"},
    {NULL, "rowSoftmax", "M=16,N=256"},
    {"def f (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=\n"
     "  softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v\n", "f", "B=2,H=3,N=13,D=7"},
    {"def f (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=\n"
     "  softmax (causalMask ((q ⬝ kᵀ) / sqrt D)) ⬝ v\n", "f", "B=1,H=2,N=64,D=32"},
    {"def f (M N : Nat) (x : Tensor [M, N]) (w b : Param [N]) : Tensor [M, N] := layernorm x w b\n", "f",
     "M=7,N=300"},
    {"def f (M K N : Nat) (a : Tensor [M, K]) (b : Tensor [K, N]) : Tensor [M, N] := a ⬝ b\n", "f",
     "M=65,K=33,N=70"},
};

static int each_tail_case(int (*fn)(TEnv *e, TileProgram *tp, size_t i)) {
  int sum = 0;
  for (size_t i = 0; i < sizeof tail_cases / sizeof tail_cases[0]; i++) {
    TEnv e;
    Graph *g = elab(&e, tail_cases[i].src ? tail_cases[i].src : softmax_src, NULL, tail_cases[i].entry,
                    tail_cases[i].sizes);
    CHECK(g != NULL);
    if (g) sum += fn(&e, tile_lower(g, DT_BF16), i);
    env_free(&e);
  }
  return sum;
}

static int verify_case(TEnv *e, TileProgram *tp, size_t i) {
  VerifyResult res;
  bool ok = all_kinds(e, tp, &res);
  CHECK(ok);
  if (!ok) fprintf(stderr, "  case %zu: %s\n", i, res.msg);
  return 0;
}

TEST(tile_kernels_agree_with_and_without_tails) { each_tail_case(verify_case); }

/* every grid folded into x (a limit of 1 forces it at small sizes); the kernels folded */
static int fold_case(TEnv *e, TileProgram *tp, size_t i) {
  int folded = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    Kernel *K = tp->kernels.data[k];
    bool multi = K->grid[1] > 1 || K->grid[2] > 1;
    CHECK(tile_fold_grid_at(e->a, K, 1));
    CHECK(K->grid[1] == 1 && K->grid[2] == 1);
    folded += multi;
  }
  CHECK(tile_check(tp, stderr));
  verify_case(e, tp, i);
  return folded;
}

/* A grid past CUDA's y/z limit is folded into x: the same kernels with every
   grid folded still pass verify. */
TEST(tile_folded_grids_compute_the_same) { CHECK(each_tail_case(fold_case) >= 3); }

TEST(tile_run_semantics) {
  /* values land rounded to the storage type; the output is a fresh tensor */
  TEnv e;
  Graph *g = elab(&e, "def f (x : Tensor [2, 3]) : Tensor [2, 3] := x * 3\n", NULL, "f", NULL);
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Shape s = g->inputs[0]->shape;
  Tensor *x = tensor_new(&s, EK_REAL);
  for (int i = 0; i < 6; i++) x->data[i] = 1.0 + i / 7.0;
  TileFault f;
  Tensor *globals[8] = {0};
  Tensor *out = tile_run(tp, &x, globals, &f);
  REQUIRE(out);
  CHECK(!f.hit);
  for (int i = 0; i < 6; i++) {
    double in = dtype_round(DT_BF16, 1.0 + i / 7.0);
    CHECK(out->data[i] == dtype_round(DT_BF16, (double)(float)(in * 3)));
    CHECK(globals[0]->data[i] == in);
  }
  for (int i = 0; i < tp->globals.len; i++) tensor_free(globals[i]);
  tensor_free(out);
  tensor_free(x);
  env_free(&e);
}

/* ---- planted wrong lowerings ---- */

TEST(verify_passes_unmutated_softmax) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  VerifyResult res;
  CHECK(all_kinds(&e, tp, &res));
  env_free(&e);
}

TEST(verify_catches_off_by_one_store_bound) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_exp");
  REQUIRE(k);
  SExpr *c = bound_const(stmt_of(k, ST_STORE)->mask, 37);
  REQUIRE(c);
  c->i = 36; /* the last column of exp is never stored */
  expect_caught(&e, tp, k);
  env_free(&e);
}

TEST(verify_catches_off_by_one_map_bound) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_sum");
  REQUIRE(k);
  SExpr *c = bound_const(stmt_of(k, ST_MAP)->mask, 37);
  REQUIRE(c);
  c->i = 36; /* the sum misses the last column */
  expect_caught(&e, tp, k);
  env_free(&e);
}

TEST(verify_catches_short_loop) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=300");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_sum");
  Stmt *lp = k ? stmt_of(k, ST_LOOP) : NULL;
  REQUIRE(lp && lp->hi->kind == SX_INT && lp->hi->i > 1);
  lp->hi = sx_int(e.a, lp->hi->i - 1); /* one tile of the row short */
  expect_caught(&e, tp, k);
  env_free(&e);
}

TEST(verify_catches_missing_max_subtraction) {
  static const char *attn = "def f (B H N D : Nat) (q k v : Tensor [B, H, N, D]) : Tensor [B, H, N, D] :=\n"
                            "  softmax ((q ⬝ kᵀ) / sqrt D) ⬝ v\n";
  const char *srcs[2] = {softmax_src, attn}, *entries[2] = {"rowSoftmax", "f"},
             *sizes[2] = {"M=5,N=37", "B=1,H=2,N=13,D=8"};
  for (int t = 0; t < 2; t++) {
    TEnv e;
    Graph *g = elab(&e, srcs[t], NULL, entries[t], sizes[t]);
    REQUIRE(g);
    TileProgram *tp = tile_lower(g, DT_BF16);
    Kernel *k = kernel_named(tp, "_exp");
    REQUIRE(k);
    SExpr *sub = find_op(stmt_of(k, ST_STORE)->value, OP_SUB);
    REQUIRE(sub);
    *sub = *sub->a[0]; /* exp(x) instead of exp(x - max) */
    expect_caught(&e, tp, k);
    env_free(&e);
  }
}

TEST(verify_catches_reduction_over_wrong_axis) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=13,N=13");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_amax");
  REQUIRE(k);
  SExpr *ld = find_load(stmt_of(k, ST_MAP)->value);
  REQUIRE(ld && ld->nidx == 2);
  SExpr *t = ld->idx[0];
  ld->idx[0] = ld->idx[1];
  ld->idx[1] = t; /* the max of a column, not of the row */
  expect_caught(&e, tp, k);
  env_free(&e);
}

TEST(verify_catches_dropped_tail_mask) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_sum");
  REQUIRE(k);
  stmt_of(k, ST_MAP)->mask = NULL; /* the tail reads past the row */
  VerifyResult res;
  CHECK(!all_kinds(&e, tp, &res));
  CHECK(res.kernel == k);
  CHECK(strstr(res.msg, "fault in k2_sum loop[0]") != NULL);
  CHECK(strstr(res.msg, "out-of-bounds load") != NULL);
  env_free(&e);
}

TEST(verify_catches_clamped_tail) {
  /* the tail masked, but reading the identity of the wrong reduction: a
     max that treats masked-off columns as 0 is wrong for negative rows */
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_amax");
  REQUIRE(k);
  stmt_of(k, ST_MAP)->other = sx_real(e.a, 0);
  expect_caught(&e, tp, k);
  env_free(&e);
}

TEST(verify_reports_out_of_bounds_store) {
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Kernel *k = kernel_named(tp, "_div");
  REQUIRE(k);
  stmt_of(k, ST_STORE)->mask = NULL;
  VerifyResult res;
  CHECK(!trial(&e, tp, VIN_NORMAL, 0, &res));
  CHECK(res.kernel == k);
  CHECK(strstr(res.msg, "out-of-bounds store to out[") != NULL);
  env_free(&e);
}

TEST(verify_entry_reports_instances) {
  TEnv e;
  elab(&e, softmax_src, NULL, NULL, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  SizeArg sizes[2] = {{"M", 4096, false}, {"N", 8192, false}};
  VerifyOpts o = {.dtype = DT_BF16, .seed = 0, .trials = 1, .out = out};
  int rc = verify_entry(&e.c, &e.prog, "rowSoftmax", sizes, 2, &o);
  fclose(out);
  CHECK(rc == 0);
  CHECK(strstr(buf, "[no tails]") != NULL);
  CHECK(strstr(buf, "[tails]") != NULL);
  CHECK(strstr(buf, "0 failed") != NULL);
  CHECK(strstr(buf, "FAIL") == NULL);
  free(buf);
  env_free(&e);
}

TEST(verify_trial_unwinds_cleanly) {
  /* the graph interpreter's error (a tensor over the limit) unwinds through
     verify_trial to the caller with nothing leaked (checked under ASan) */
  TEnv e;
  Graph *g = elab(&e, softmax_src, NULL, "rowSoftmax", "M=5,N=37");
  REQUIRE(g);
  TileProgram *tp = tile_lower(g, DT_BF16);
  Tensor **in = calloc((size_t)g->ninputs + 1, sizeof *in);
  verify_inputs(g, DT_BF16, VIN_NORMAL, 0, in);
  e.c.max_elems = 10;
  e.c.err = NULL;
  VerifyResult res;
  volatile bool unwound = false;
  if (setjmp(e.jb) == 0) verify_trial(tp, in, true, &res);
  else unwound = true;
  CHECK(unwound);
  CHECK(e.c.unwind == &e.jb);
  tensor_free(in[0]);
  free(in);
  env_free(&e);
}
