/* test_emit.c: the TileLang and Triton emitters on small hand-built graphs:
   one kernel function per kernel, run/reference signatures in declaration
   order with the Lean names (spelled for Python where they must be), run()
   checking rather than casting its arguments, every kernel launched, every
   global a kernel takes allocated or passed in, every Triton load masked,
   names that clash with tile buffers renamed inside the module only, and a
   program the target cannot express refused with a message. */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/emit/emit.h"
#include "../../src/search/search.h"
#include "unit.h"

typedef struct EEnv {
  Arena *a;
  Ctx c;
  jmp_buf jb;
  Graph *g;
} EEnv;

static void eenv_init(EEnv *e) {
  e->a = arena_new();
  ctx_init(&e->c, e->a, stderr);
  e->c.unwind = &e->jb;
  e->g = graph_new(&e->c);
  e->g->entry = "small";
}

static Shape shp(int rank, int64_t d0, int64_t d1) {
  Shape s;
  memset(&s, 0, sizeof s);
  s.rank = rank;
  s.d[0].n = d0;
  s.d[1].n = d1;
  return s;
}

static const Pos NOPOS = {0};

/* softmax(x) @ w over x [4, 8], w [8, 16], the first input named `first` */
static Node *softmax_matmul(EEnv *e, const char *first) {
  Shape xs = shp(2, 4, 8), ws = shp(2, 8, 16);
  Node *x = ir_input(e->g, first, ROLE_TENSOR, &xs, NOPOS);
  Node *w = ir_input(e->g, "w", ROLE_PARAM, &ws, NOPOS);
  Node *m = ir_reduce(e->g, OP_AMAX, x, 1, NOPOS);
  Node *p = ir_unary(e->g, OP_EXP, ir_binary(e->g, OP_SUB, x, m, NOPOS), NOPOS);
  Node *s = ir_reduce(e->g, OP_SUM, p, 1, NOPOS);
  Node *y = ir_binary(e->g, OP_DIV, p, s, NOPOS);
  Node *o = ir_matmul(e->g, y, w, NOPOS);
  e->g->output = o;
  return o;
}

/* The module as a string (malloc'd); ok set to emit_module's result. */
static char *emit_str(const TileProgram *tp, Target t, bool *ok, char *err, size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  EmitInfo info = {.file = "small.lean", .entry = "small", .sizes = "M=4"};
  *ok = emit_module(f, tp, t, &info, err, errlen);
  fclose(f);
  char *copy = malloc(len + 1); /* a copy, so that the compiler sees no pointer to the local */
  if (copy) memcpy(copy, buf ? buf : "", buf ? len + 1 : 1);
  free(buf);
  return copy;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The text of run()'s body. */
static const char *run_body(const char *m) {
  const char *r = strstr(m, "\ndef run(");
  return r ? r : "";
}

static void check_common(const TileProgram *tp, const char *m, const char *first) {
  char want[128];
  snprintf(want, sizeof want, "\ndef run(%s, w, *, out=None):", first);
  CHECK(strstr(m, want) != NULL);
  snprintf(want, sizeof want, "\ndef reference(%s, w):", first);
  CHECK(strstr(m, want) != NULL);
  CHECK(strstr(m, "\nif __name__ == \"__main__\":") != NULL);
  CHECK(strstr(m, "# entry: small") != NULL);
  CHECK(strstr(m, "RTOL, ATOL = 0.02, 0.02") != NULL); /* bf16 */
  /* every temporary and the output is allocated in run() before use */
  const char *body = run_body(m);
  for (int g = 0; g < tp->globals.len; g++) {
    const TBuf *b = tp->globals.data[g];
    if (b->role == GB_INPUT) continue;
    snprintf(want, sizeof want, "    %s = torch.empty(", b->name);
    CHECK(strstr(body, want) != NULL);
  }
  /* run() checks its arguments once, through the module's one helper, and
     never casts, copies or reshapes them */
  const char *end = strstr(body, "\ndef reference(");
  size_t n = end ? (size_t)(end - body) : strlen(body);
  char *run_text = strndup(body, n);
  REQUIRE(run_text);
  CHECK(count(m, "\ndef _ts_check(fn, args, strict=True, out=None):") == 1);
  CHECK(strstr(run_text, "return _ts_run(*_ts_check(\"run\", (") != NULL);
  CHECK(strstr(run_text, ".to(device=") == NULL);
  CHECK(strstr(run_text, ".contiguous()") == NULL);
  snprintf(want, sizeof want, "(\"%s\", (4, 8), torch.bfloat16, \"the storage dtype\"),", first);
  CHECK(strstr(m, want) != NULL);
  free(run_text);
  /* the reference reads the graph's output node */
  snprintf(want, sizeof want, "return v%d.to(ft)", tp->g->output->id);
  CHECK(strstr(m, want) != NULL);
}

TEST(emit_tilelang_softmax_matmul) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  softmax_matmul(&e, "x");
  TileProgram *tp = tile_lower(e.g, DT_BF16);
  REQUIRE(tile_check(tp, stderr));
  bool ok;
  char err[256] = "";
  char *m = emit_str(tp, TARGET_TILELANG, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(count(m, "@T.prim_func") == tp->kernels.len);
  CHECK(tp->kernels.len == 4); /* amax, exp (two users), sum, and the matmul with the division inlined */
  for (int k = 0; k < tp->kernels.len; k++) {
    char want[128];
    snprintf(want, sizeof want, "compiled_kernel(\"%s\")(", tp->kernels.data[k]->name);
    CHECK(strstr(run_body(m), want) != NULL);
    snprintf(want, sizeof want, "\ndef %s(\n", tp->kernels.data[k]->name);
    CHECK(strstr(m, want) != NULL);
  }
  CHECK(strstr(m, "T.gemm(A_tile, B_tile, C_acc)") != NULL);
  CHECK(strstr(m, "T.reduce_max(tile, acc, dim=1, clear=False)") != NULL);
  CHECK(strstr(m, "T.Pipelined(") != NULL);
  CHECK(strstr(m, "target=TARGET") != NULL && strstr(m, "\"sm_90a\"") != NULL);
  CHECK(strstr(m, "x: T.Tensor((4, 8), \"bfloat16\")") != NULL);
  check_common(tp, m, "x");
  free(m);
  arena_free(e.a);
}

TEST(emit_triton_softmax_matmul) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  softmax_matmul(&e, "x");
  TileProgram *tp = tile_lower(e.g, DT_BF16);
  REQUIRE(tile_check(tp, stderr));
  bool ok;
  char err[256] = "";
  char *m = emit_str(tp, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(count(m, "@triton.jit") == tp->kernels.len);
  for (int k = 0; k < tp->kernels.len; k++) {
    char want[128];
    snprintf(want, sizeof want, "    %s[(", tp->kernels.data[k]->name);
    CHECK(strstr(run_body(m), want) != NULL);
  }
  /* Triton's where is not lazy: every load is masked */
  CHECK(count(m, "tl.load(") > 0);
  CHECK(count(m, "tl.load(") == count(m, ", other=0)"));
  CHECK(strstr(m, "tl.dot(A_tile, B_tile, C_acc)") != NULL);
  CHECK(strstr(m, "TRITON_KERNELS = [") != NULL);
  check_common(tp, m, "x");
  free(m);
  /* f32 storage: the dot keeps IEEE precision, tolerance 1e-4 */
  TileProgram *tp32 = tile_lower(e.g, DT_F32);
  m = emit_str(tp32, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(strstr(m, "input_precision=\"ieee\"") != NULL);
  CHECK(strstr(m, "RTOL, ATOL = 0.0001, 0.0001") != NULL);
  free(m);
  arena_free(e.a);
}

TEST(emit_renames_clashing_globals) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  softmax_matmul(&e, "acc"); /* `acc` is also a tile buffer of the reduce kernels */
  TileProgram *tp = tile_lower(e.g, DT_BF16);
  REQUIRE(tile_check(tp, stderr));
  bool ok;
  char err[256] = "";
  for (int t = 0; t < 2; t++) {
    char *m = emit_str(tp, t ? TARGET_TRITON : TARGET_TILELANG, &ok, err, sizeof err);
    CHECK(ok);
    /* renamed inside, not in run()'s or reference()'s signature */
    CHECK(strstr(m, "\ndef run(acc, w, *, out=None):") != NULL);
    CHECK(strstr(m, "\ndef reference(acc, w):") != NULL);
    CHECK(strstr(m, "\ndef _ts_run(acc_g1, w, _ts_out=None):") != NULL);
    CHECK(strstr(m, "(\"acc\", (4, 8), torch.bfloat16,") != NULL); /* errors name `acc` */
    free(m);
  }
  arena_free(e.a);
}

/* Lean names Python cannot take as they are: spelled in run()'s signature,
   named as written in the argument table (hence in run()'s errors), and the
   helpers' prefix moved off a parameter that starts with it. */
TEST(emit_spells_lean_names_for_python) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  static const char *lean[] = {"x'", "pass", "W\u2081", "torch", "k", "\u03b1", "_ts_x", "x_prime"};
  static const char *python[] = {"x_prime_2", "pass_", "W1", "torch", "k", "alpha", "_ts_x", "x_prime"};
  enum { NIN = sizeof lean / sizeof lean[0] };
  Shape xs = shp(2, 4, 8);
  Node *sum = NULL;
  for (int i = 0; i < NIN; i++) {
    Node *x = ir_input(e.g, lean[i], ROLE_TENSOR, &xs, NOPOS);
    sum = sum ? ir_binary(e.g, OP_ADD, sum, x, NOPOS) : x;
  }
  e.g->output = ir_unary(e.g, OP_EXP, sum, NOPOS);
  TileProgram *tp = tile_lower(e.g, DT_BF16);
  REQUIRE(tile_check(tp, stderr));
  char sig[256] = "", row[64];
  for (int i = 0; i < NIN; i++) snprintf(sig + strlen(sig), sizeof sig - strlen(sig), "%s%s", i ? ", " : "", python[i]);
  for (int t = 0; t < 2; t++) {
    bool ok;
    char err[256] = "", want[320];
    char *m = emit_str(tp, t ? TARGET_TRITON : TARGET_TILELANG, &ok, err, sizeof err);
    CHECK(ok);
    snprintf(want, sizeof want, "\ndef run(%s, *, out=None):", sig);
    CHECK(strstr(m, want) != NULL);
    snprintf(want, sizeof want, "\ndef reference(%s):", sig);
    CHECK(strstr(m, want) != NULL);
    for (int i = 0; i < NIN; i++) {
      snprintf(row, sizeof row, "(\"%s\", (4, 8),", lean[i]);
      CHECK(strstr(m, row) != NULL);
    }
    CHECK(strstr(m, "x_prime_2 (x' in the Lean source): bfloat16 (4, 8)") != NULL);
    CHECK(strstr(m, "\ndef __ts_check(") != NULL && strstr(m, "\ndef _ts_check(") == NULL);
    CHECK(strstr(m, "return __ts_run(*__ts_check(\"run\", (") != NULL);
    /* no name outside ASCII inside the module's code (kernels included) */
    const char *code = strstr(m, "\nimport ");
    const char *args_table = strstr(m, "__ts_ARGS = (");
    REQUIRE(code && args_table);
    for (const char *p = code; p < args_table; p++) CHECK((unsigned char)*p < 0x80);
    free(m);
  }
  arena_free(e.a);
}

TEST(emit_triton_refuses_non_power_of_two_blocks) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  Shape xs = shp(2, 4, 8);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &xs, NOPOS);
  e.g->output = ir_unary(e.g, OP_EXP, x, NOPOS);
  TileProgram *tp = tile_lower(e.g, DT_BF16);
  REQUIRE(tp->kernels.len == 1 && tp->kernels.data[0]->body.len == 1);
  tp->kernels.data[0]->body.data[0]->ext[0] = 3; /* not what tl.arange accepts */
  bool ok;
  char err[256] = "";
  char *m = emit_str(tp, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(!ok);
  CHECK(strstr(err, "power of two") != NULL);
  free(m);
  /* TileLang takes any extent */
  m = emit_str(tp, TARGET_TILELANG, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(strstr(m, "T.Parallel(3, ") != NULL);
  free(m);
  arena_free(e.a);
}

TEST(emit_target_names) {
  Target t;
  CHECK(target_parse("tilelang", &t) && t == TARGET_TILELANG);
  CHECK(target_parse("triton", &t) && t == TARGET_TRITON);
  CHECK(!target_parse("cuda", &t));
  CHECK_STR(target_name(TARGET_TRITON), "triton");
}

/* TileLang's tile loads are bulk copies (T.copy: TMA) as the kernel's
   schedule says; by default with 256 threads or more and no nested loop
   (the H200's measurements); Triton launches with the loops' pipeline depth */
TEST(emit_bulk_copies_follow_the_schedule) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  /* tiles that divide the operands: loads without masks, copies */
  Shape xs = shp(2, 128, 256), ws = shp(2, 256, 128);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &xs, NOPOS);
  Node *w = ir_input(e.g, "w", ROLE_PARAM, &ws, NOPOS);
  e.g->output = ir_matmul(e.g, x, w, NOPOS);
  SearchStats stats;
  Plan *plan = plan_search(e.g, DT_BF16, NULL, &stats);
  REQUIRE(plan != NULL);
  TileProgram *tp = tile_lower_plan(plan);
  REQUIRE(tp && tile_check(tp, stderr));
  Kernel *mm = NULL;
  for (int k = 0; k < tp->kernels.len; k++)
    if (kernel_has(tp->kernels.data[k], ST_GEMM)) mm = tp->kernels.data[k];
  REQUIRE(mm != NULL);
  bool ok;
  char err[256] = "";
  int threads = mm->threads;
  struct { int copy, threads; bool want; } cases[] = {
      {0, 128, false}, {0, 256, true}, {1, 128, true}, {2, 256, false}};
  for (int c = 0; c < 4; c++) {
    mm->copy = cases[c].copy;
    mm->threads = cases[c].threads;
    char *m = emit_str(tp, TARGET_TILELANG, &ok, err, sizeof err);
    CHECK(ok);
    CHECK((strstr(m, "T.copy(") != NULL) == cases[c].want);
    free(m);
  }
  mm->copy = 0;
  mm->threads = threads;
  char *m = emit_str(tp, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(strstr(m, "num_stages=") != NULL);
  free(m);
  arena_free(e.a);
}

/* A row statistic reduced after a product loop (a logsumexp of logits) is
   copied to shared memory after its last reduction, not before it (the
   copy was once placed right after the loop: mlp_digits read garbage on
   the H200); and no loop pipelines deeper than its trips. */
static bool loops_fit(const Kernel *k, const StmtList *l) {
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->kind == ST_LOOP && (s->stages > tile_loop_trips_max(k, s) || !loops_fit(k, &s->body))) return false;
    if (s->kind == ST_IF && (!loops_fit(k, &s->body) || !loops_fit(k, &s->orelse))) return false;
  }
  return true;
}

TEST(emit_stat_copies_follow_their_reductions) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  Shape xs = shp(2, 64, 1024), ws = shp(2, 1024, 16); /* a K loop */
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &xs, NOPOS);
  Node *w = ir_input(e.g, "w", ROLE_PARAM, &ws, NOPOS);
  Node *z = ir_matmul(e.g, x, w, NOPOS);
  Node *m = ir_reduce(e.g, OP_AMAX, z, 1, NOPOS);
  Node *p = ir_unary(e.g, OP_EXP, ir_binary(e.g, OP_SUB, z, m, NOPOS), NOPOS);
  Node *s = ir_reduce(e.g, OP_SUM, p, 1, NOPOS);
  e.g->output = ir_binary(e.g, OP_ADD, m, ir_unary(e.g, OP_LOG, s, NOPOS), NOPOS);
  SearchStats stats;
  Plan *plan = plan_search(e.g, DT_BF16, NULL, &stats);
  REQUIRE(plan != NULL);
  TileProgram *tp = tile_lower_plan(plan);
  REQUIRE(tp && tile_check(tp, stderr));
  for (int k = 0; k < tp->kernels.len; k++) CHECK(loops_fit(tp->kernels.data[k], &tp->kernels.data[k]->body));
  bool ok;
  char err[256] = "";
  char *mod = emit_str(tp, TARGET_TILELANG, &ok, err, sizeof err);
  CHECK(ok);
  int copies = 0;
  for (const char *c = strstr(mod, "_s[i] = "); c; c = strstr(c + 1, "_s[i] = ")) {
    /* the fragment's name: back to the line's indentation */
    const char *b = c;
    while (b > mod && b[-1] != ' ') b--;
    char name[64], want[96];
    snprintf(name, sizeof name, "%.*s", (int)(c - b), b);
    snprintf(want, sizeof want, ", %s, dim=", name);
    const char *end = strstr(c, "@T.prim_func");
    const char *later = strstr(c, want);
    CHECK(!later || (end && later > end)); /* no reduction into it after its copy, in this kernel */
    copies++;
  }
  CHECK(copies > 0);
  free(mod);
  arena_free(e.a);
}

/* RMSNorm → matmul at M > N: the gain moves onto the weight's rows
   (matmul-colscale-left), a small kernel stores g ⊙ W, and the product's
   kernel gives its loaded x tile to the product as it is (no copy of it)
   while the sum of squares reads the same tile.  Triton loads that tile a
   second time for the sum (Triton 3.6 pipelines one load feeding tl.dot
   and a reduction wrongly: bench/exp/triton_dual_use.py). */
TEST(emit_rmsnorm_matmul_folds_the_gain_and_loads_twice_for_triton) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  Shape xs = shp(2, 8192, 2048), gs = shp(1, 2048, 0), ws = shp(2, 2048, 1024);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &xs, NOPOS);
  Node *g = ir_input(e.g, "g", ROLE_PARAM, &gs, NOPOS);
  Node *w = ir_input(e.g, "w", ROLE_PARAM, &ws, NOPOS);
  Node *ss = ir_reduce(e.g, OP_SUM, ir_binary(e.g, OP_MUL, x, x, NOPOS), 1, NOPOS);
  Node *r = ir_unary(e.g, OP_RSQRT, ss, NOPOS);
  Node *h = ir_binary(e.g, OP_MUL, ir_binary(e.g, OP_MUL, x, r, NOPOS), g, NOPOS);
  e.g->output = ir_matmul(e.g, h, w, NOPOS);
  Graph *rw = search_rewrite(e.g, NULL, 0, NULL);
  REQUIRE(rw != NULL);
  SearchStats stats;
  Plan *plan = plan_search(rw, DT_BF16, NULL, &stats);
  REQUIRE(plan != NULL);
  TileProgram *tp = tile_lower_plan(plan);
  REQUIRE(tp && tile_check(tp, stderr));
  /* one kernel with the product, reading no shared tile the threads fill */
  int products = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *kk = tp->kernels.data[k];
    if (!kernel_has(kk, ST_GEMM)) continue;
    products++;
    CHECK(kernel_has(kk, ST_REDUCE)); /* the sum of squares streams in the product's loop */
    CHECK(!tile_thread_fills(&kk->body, NULL));
  }
  CHECK(products == 1);
  bool ok;
  char err[256] = "";
  char *mod = emit_str(tp, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(mod && strstr(mod, "_r = tl.load(") && strstr(mod, "eviction_policy=\"evict_last\""));
  free(mod);
  mod = emit_str(tp, TARGET_TILELANG, &ok, err, sizeof err);
  CHECK(ok);
  CHECK(mod && !strstr(mod, "A2 = T.alloc") && !strstr(mod, "A3 = T.alloc") && !strstr(mod, "A4 = T.alloc"));
  free(mod);
  arena_free(e.a);
}

/* (x W) - amin x: the loaded x tile reaches tl.dot through a copy into the
   product's operand (map A[i, j] = X[i, j]) and the running minimum reads
   it too.  Triton loads it a second time for the minimum, and the copy
   reads the first load (a lane-wise Welford pair beside a product read one
   load so and was wrong, not deterministically, at 8 warps and 3 stages on
   an H100: bench/exp/s20/repeat.py). */
TEST(emit_triton_loads_twice_a_tile_copied_into_a_product) {
  UNIT_GRAPH_ENV(EEnv, eenv_init, e)
  Shape xs = shp(2, 4096, 4096), ws = shp(2, 4096, 4096);
  Node *x = ir_input(e.g, "x", ROLE_TENSOR, &xs, NOPOS);
  Node *w = ir_input(e.g, "w", ROLE_PARAM, &ws, NOPOS);
  Node *lo = ir_reduce(e.g, OP_AMIN, x, 1, NOPOS);
  e.g->output = ir_binary(e.g, OP_SUB, ir_matmul(e.g, x, w, NOPOS), lo, NOPOS);
  Graph *rw = search_rewrite(e.g, NULL, 0, NULL);
  REQUIRE(rw != NULL);
  Plan *plan = plan_search(rw, DT_BF16, NULL, NULL);
  REQUIRE(plan != NULL);
  TileProgram *tp = tile_lower_plan(plan);
  REQUIRE(tp && tile_check(tp, stderr));
  /* the shape this is about: in the product's loop, the gemm's left
     operand is a copy of a loaded tile that another statement reads */
  const char *xname = NULL, *aname = NULL;
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *kk = tp->kernels.data[k];
    for (int i = 0; i < kk->body.len; i++) {
      const Stmt *l = kk->body.data[i];
      if (l->kind != ST_LOOP) continue;
      for (int j = 0; j < l->body.len; j++) {
        const Stmt *c = l->body.data[j];
        if (c->kind == ST_MAP && c->value && c->value->kind == SX_TILE) xname = c->value->buf->name, aname = c->dst->name;
      }
    }
  }
  REQUIRE(xname && aname);
  bool ok;
  char err[256] = "";
  char *mod = emit_str(tp, TARGET_TRITON, &ok, err, sizeof err);
  CHECK(ok);
  char second[64], copy[128], first_only[128];
  snprintf(second, sizeof second, "%s_r = tl.broadcast_to(tl.load(", xname);
  snprintf(copy, sizeof copy, "%s = tl.broadcast_to(%s, ", aname, xname);
  snprintf(first_only, sizeof first_only, "tl.minimum(");
  CHECK(mod && strstr(mod, second));
  CHECK(mod && strstr(mod, copy)); /* the copy for tl.dot reads the first load */
  char reads_second[64];
  snprintf(reads_second, sizeof reads_second, ", %s_r, propagate_nan", xname);
  CHECK(mod && strstr(mod, first_only) && strstr(mod, reads_second)); /* the minimum reads the second */
  free(mod);
  arena_free(e.a);
}
