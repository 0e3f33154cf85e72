/* Unit tests of elaboration (src/front/elab.c, builtins.c) and of the graph
   builder's rules as the language reaches them: inlining, implicit inference,
   named and optional arguments, folds over layers, safe constant folding,
   hash-consing, size arithmetic, and the errors for programs that must be
   rejected (with the first line of the diagnostic checked). */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/front/front.h"
#include "../../src/front/value.h"
#include "unit.h"

static char ediag[8192];
static int64_t step_limit; /* 0: the default */

typedef struct Run {
  Arena *a;
  Graph *g;
} Run;

/* Compile src (after the prelude) and elaborate `entry` with the sizes in
   spec ("A=1,B=2" or NULL).  r.g is NULL on an error, whose text is in ediag. */
static Run compile(const char *src, const char *entry, const char *spec) {
  Run r = {arena_new(), NULL};
  FILE *fp = tmpfile();
  Ctx c;
  ctx_init(&c, r.a, fp);
  if (step_limit) c.max_steps = step_limit, c.max_nodes = (int)(step_limit / 10);
  jmp_buf jb;
  c.unwind = &jb;
  SizeArg sizes[16];
  int ns = 0;
  char buf[256] = "";
  if (spec) snprintf(buf, sizeof buf, "%s", spec);
  for (char *t = buf[0] ? strtok(buf, ",") : NULL; t && ns < 16; t = strtok(NULL, ",")) {
    char *eq = strchr(t, '=');
    *eq = 0;
    sizes[ns++] = (SizeArg){arena_strdup(r.a, t), atoll(eq + 1), false};
  }
  Program prog = {0};
  SrcFile *f = src_from_string(r.a, "t.lean", src, strlen(src));
  if (setjmp(jb) == 0) {
    front_load(&c, &prog, f);
    r.g = elab_entry(&c, &prog, entry, (Pos){0}, sizes, ns);
  }
  rewind(fp);
  size_t n = fread(ediag, 1, sizeof ediag - 1, fp);
  ediag[n] = 0;
  fclose(fp);
  return r;
}

static int count_op(const Graph *g, Op op) {
  int k = 0;
  for (int i = 0; i < g->nnodes; i++) k += g->nodes[i]->op == op;
  return k;
}

static bool has(const char *s) { return strstr(ediag, s) != NULL; }

#define EXPECT_ERROR(src, entry, spec, text)                                   \
  do {                                                                         \
    Run r_ = compile(src, entry, spec);                                        \
    CHECK(r_.g == NULL);                                                       \
    CHECK(has(text));                                                          \
    if (!has(text)) fprintf(stderr, "  diagnostic was: %s\n", ediag);         \
    arena_free(r_.a);                                                          \
  } while (0)

TEST(elab_builtins_declared_in_prelude) {
  /* every primitive is declared for Lean as `opaque NAME` at column 1, and
     every dot-free opaque there is a primitive */
  char pat[64];
  for (int i = 0; i < builtin_count; i++) {
    snprintf(pat, sizeof pat, "\nopaque %s ", builtins[i].name);
    CHECK(strstr(ts_prelude_text, pat) != NULL);
    if (!strstr(ts_prelude_text, pat)) fprintf(stderr, "  missing: %s\n", builtins[i].name);
  }
  for (const char *p = strstr(ts_prelude_text, "\nopaque "); p; p = strstr(p + 1, "\nopaque ")) {
    char name[64];
    int k = 0;
    for (const char *q = p + 8; *q && *q != ' ' && *q != '\n' && k < 63; q++) name[k++] = *q;
    name[k] = 0;
    if (!strchr(name, '.')) CHECK(builtin_find(name) != NULL);
  }
}

TEST(elab_hash_consing_shares_equal_subterms) {
  Run r = compile("def f (x : Tensor [4]) := exp x + exp x", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_EXP) == 1);
  CHECK(r.g->output->op == OP_ADD && r.g->output->in[0] == r.g->output->in[1]);
  arena_free(r.a);
}

TEST(elab_folds_scalar_arithmetic) {
  Run r = compile("def f (D : Nat) (x : Tensor [D]) := x * (1 / sqrt D)", "f", "D=16");
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_SQRT) == 0);
  CHECK(r.g->output->op == OP_MUL && r.g->output->in[1]->op == OP_CONST);
  CHECK(r.g->output->in[1]->value == 0.25);
  arena_free(r.a);
}

TEST(elab_refuses_unsafe_folds) {
  /* -0.0, an infinity and NaN are not folded: the ops stay in the graph */
  Run r = compile("def f (x : Tensor [4]) := x + 0.0 * (-1.0)", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_MUL) + count_op(r.g, OP_NEG) >= 1);
  arena_free(r.a);
  r = compile("def f (x : Tensor [4]) := x + 1.0 / 0.0", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_DIV) == 1);
  arena_free(r.a);
  r = compile("def f (x : Tensor [4]) := x + log (-1.0)", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_LOG) == 1);
  arena_free(r.a);
}

TEST(elab_size_arithmetic_is_symbolic) {
  Run r = compile("def f (H D : Nat) (x : Tensor [H * D, D + 1]) := x", "f", "H=4,D=8");
  REQUIRE(r.g);
  const Shape *s = &r.g->inputs[0]->shape;
  CHECK(s->d[0].n == 32 && s->d[0].sym && strcmp(s->d[0].sym, "H*D") == 0);
  CHECK(s->d[1].n == 9 && s->d[1].sym && strcmp(s->d[1].sym, "D+1") == 0);
  arena_free(r.a);
  /* Nat subtraction truncates at zero, as in Lean */
  r = compile("def f (N : Nat) (x : Tensor [N - 5 + 1]) := x", "f", "N=2");
  REQUIRE(r.g);
  CHECK(r.g->inputs[0]->shape.d[0].n == 1);
  arena_free(r.a);
}

TEST(elab_infers_implicit_parameters) {
  Run r = compile("def g {B : Nat} (x : Tensor [B, 4]) : Tensor [B, 4] := x * 2\n"
                  "def h (x : Tensor [7, 4]) := g x", "h", NULL);
  REQUIRE(r.g);
  CHECK(r.g->output->shape.d[0].n == 7);
  arena_free(r.a);
  r = compile("def g {s : Shape} (x : Tensor s) (y : Tensor s) := x + y\n"
              "def h (x : Tensor [3, 4]) (y : Tensor [4]) := g x y", "h", NULL);
  CHECK(r.g == NULL);
  CHECK(has("argument 'y' of 'g' has shape [4] (rank 1), but [3, 4] is expected"));
  arena_free(r.a);
  EXPECT_ERROR("def g {B C : Nat} (x : Tensor [B]) := x\ndef h (x : Tensor [3]) := g x", "h", NULL,
               "cannot infer the implicit parameter 'C' of 'g'");
}

TEST(elab_named_and_optional_arguments) {
  Run r = compile("def f (x : Tensor [3, 5]) := sum x (dim := 0)", "f", NULL);
  REQUIRE(r.g);
  CHECK(r.g->output->op == OP_SUM && r.g->output->axis == 0);
  arena_free(r.a);
  r = compile("def f (x : Tensor [3, 5]) := sum x", "f", NULL);
  REQUIRE(r.g);
  CHECK(r.g->output->axis == 1);
  arena_free(r.a);
  r = compile("def f (x : Tensor [3, 5]) := amax x 0", "f", NULL);
  REQUIRE(r.g);
  CHECK(r.g->output->op == OP_AMAX && r.g->output->axis == 0);
  arena_free(r.a);
  EXPECT_ERROR("def f (x : Tensor [3, 5]) := sum x (dimm := 0)", "f", NULL,
               "'sum' has no parameter named 'dimm'; did you mean 'dim'?");
  EXPECT_ERROR("def f (x : Tensor [3, 5]) := sum x (dim := 0) (dim := 1)", "f", NULL,
               "parameter 'dim' of 'sum' is given twice");
  EXPECT_ERROR("def f (x : Tensor [3]) := exp x x", "f", NULL, "too many arguments");
}

TEST(elab_layers_unroll_with_stacked_params) {
  Run r = compile("def m (L D : Nat) (x : Tensor [2, D]) (W : Param [L, D, D]) :=\n"
                  "  layers L x (fun l h => h + relu (h ⬝ W[l]))", "m", "L=3,D=4");
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_MATMUL) == 3);
  CHECK(count_op(r.g, OP_SLICE) == 3);
  CHECK(r.g->inputs[1]->role == ROLE_PARAM);
  arena_free(r.a);
  EXPECT_ERROR("def m (W : Param [2, 3]) := W[2]", "m", NULL, "index 2 is out of range");
}

/* The checks of `layers` that need values: a step known only as a local,
   a count or a function of the wrong kind, each reported where it is
   written.  Curried steps and declarations are accepted. */
TEST(elab_layers_misuse_is_reported_where_written) {
  const char *two = "'layers' passes its function two arguments, the layer index and the carried value";
  EXPECT_ERROR("def f (x : Tensor [2]) :=\n  let step h := h * 2\n  layers 2 x step", "f", NULL,
               "t.lean:2:7: error: 'layers' passes its function two arguments");
  EXPECT_ERROR("def f (x : Tensor [2]) :=\n  let g := fun a => a\n  let step := fun l => g\n  layers 2 x (fun h => step h h)",
               "f", NULL, two);
  EXPECT_ERROR("def f (x : Tensor [2]) := let s := fun l h c => h; layers 2 x s", "f", NULL,
               "this 'fun' needs 3 parameters (l, h, c)");
  EXPECT_ERROR("def f (x : Tensor [2]) :=\n  layers x 2 (fun l h => h)", "f", NULL,
               "t.lean:2:10: error: the number of layers");
  EXPECT_ERROR("def f (x y : Tensor [2]) :=\n  layers 2 x y", "f", NULL,
               "t.lean:2:14: error: the last argument of 'layers' must be a function");
  EXPECT_ERROR("def f (x : Tensor [2]) :=\n  layers 2 (fun l h => h) x", "f", NULL, "the function comes last");
  /* a local fun given too many arguments is still caught when it runs */
  EXPECT_ERROR("def f (x : Tensor [2]) := let g := fun a => a + 1; g x x", "f", NULL,
               "too many arguments: 'fun' takes 1 explicit parameter (a) and returns a tensor");
  Run r = compile("def f (x : Tensor [2]) :=\n  let step := fun l => fun h => h + l\n  layers 3 x step", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_ADD) == 3);
  arena_free(r.a);
  r = compile("def s (l : Nat) (h : Tensor [2]) : Tensor [2] := h * l\n"
              "def f (x : Tensor [2]) := let t := s; layers 2 x t", "f", NULL);
  REQUIRE(r.g);
  CHECK(count_op(r.g, OP_MUL) == 2 || count_op(r.g, OP_MUL) == 1); /* 0*x may fold to a constant */
  arena_free(r.a);
}

TEST(elab_broadcast_and_matmul_shapes) {
  Run r = compile("def f (a : Tensor [3, 1]) (b : Tensor [4]) := a + b", "f", NULL);
  REQUIRE(r.g);
  CHECK(r.g->output->shape.rank == 2 && r.g->output->shape.d[0].n == 3 && r.g->output->shape.d[1].n == 4);
  arena_free(r.a);
  r = compile("def f (a : Tensor [2, 1, 3, 4]) (b : Tensor [5, 4, 6]) := a ⬝ b", "f", NULL);
  REQUIRE(r.g);
  const Shape *s = &r.g->output->shape;
  CHECK(s->rank == 4 && s->d[0].n == 2 && s->d[1].n == 5 && s->d[2].n == 3 && s->d[3].n == 6);
  arena_free(r.a);
  EXPECT_ERROR("def f (a : Tensor [3, 4]) (b : Tensor [5, 6]) := a ⬝ b", "f", NULL,
               "[3, 4] ⬝ [5, 6] has 4 against 5");
  EXPECT_ERROR("def f (a : Tensor [3, 4]) (b : Tensor [3, 5]) := a + b", "f", NULL,
               "cannot broadcast the shapes [3, 4] with [3, 5]");
}

TEST(elab_no_recursion_and_no_hang) {
  /* a definition cannot see itself: Lean's order, so no recursion */
  EXPECT_ERROR("def f (x : Tensor [2]) := f x", "f", NULL, "'f' is not defined yet here");
  /* self-application ends with an error, not a hang or a stack overflow */
  Run r = compile("def w (x : Tensor [2]) := (fun f => f f) (fun f => f f)", "w", NULL);
  CHECK(r.g == NULL);
  CHECK(has("steps") || has("levels deep"));
  arena_free(r.a);
  step_limit = 100000;
  EXPECT_ERROR("def f (x : Tensor [2]) := layers 100000000 x (fun l h => h + 1)", "f", NULL, "nodes");
  EXPECT_ERROR("def f (x : Tensor [2]) := layers 100000000 x (fun l h => h)", "f", NULL, "steps");
  step_limit = 0;
}

TEST(elab_size_overflow_is_an_error) {
  EXPECT_ERROR("def f (x : Tensor [4611686018427387904 * 4]) := x", "f", NULL, "integer overflow");
  EXPECT_ERROR("def f (x : Tensor [4294967296, 4294967296]) := x", "f", NULL, "more than 2^60 elements");
  /* every intermediate too, not only inputs (an outer product of 2^32 elements wrapped to 0 elements) */
  EXPECT_ERROR("def f (N : Nat) (x : Tensor [N]) : Tensor [N, N] := reshape x [N, 1] * reshape x [1, N]", "f",
               "N=4294967296", "more than 2^60 elements");
}

TEST(elab_entry_parameters) {
  EXPECT_ERROR("def f (N : Nat) (x : Tensor [N]) := x", "f", NULL, "pass --size N=");
  EXPECT_ERROR("def f (N : Nat) (x : Tensor [N]) := x", "f", "N=2,M=3", "--size M");
  EXPECT_ERROR("def attention (x : Tensor [2]) := x", "atention", NULL,
               "no definition named 'atention'; did you mean 'attention'?");
  EXPECT_ERROR("def f (x : Tensor [2]) := x", "g", NULL, "no definition named 'g'");
  Run r = compile("def f (x : Tensor [2]) (eps : Float := 0.5) := x + eps", "f", NULL);
  REQUIRE(r.g);
  CHECK(r.g->ninputs == 1 && r.g->output->in[1]->value == 0.5);
  arena_free(r.a);
  /* a concrete instance keeps the generic definition's symbols */
  r = compile("def f (B N : Nat) (x : Tensor [B, N]) := x\ndef f4 := f 2 3", "f4", NULL);
  REQUIRE(r.g);
  CHECK(r.g->inputs[0]->shape.d[1].sym && strcmp(r.g->inputs[0]->shape.d[1].sym, "N") == 0);
  arena_free(r.a);
}

TEST(elab_kinds_of_elements) {
  EXPECT_ERROR("def f (x : Tensor [2]) := exp (x < 1)", "f", NULL, "boolean mask");
  EXPECT_ERROR("def f (x : Tensor [2]) (i : Tensor [2]) := gather x i", "f", NULL, "Index");
  Run r = compile("def f (N : Nat) (x : Tensor [N, N]) :=\n"
                  "  let i := reshape (iota N) [N, 1]\n"
                  "  select (iota N ≤ i) x neginf", "f", "N=3");
  REQUIRE(r.g);
  CHECK(r.g->output->op == OP_SELECT && r.g->output->in[0]->kind == EK_BOOL);
  arena_free(r.a);
}

TEST(elab_invariant_checker_catches_corruption) {
  Run r = compile("def f (x : Tensor [3, 4]) := sum (exp x)", "f", NULL);
  REQUIRE(r.g);
  CHECK(graph_check(r.g, NULL));
  r.g->output->shape.d[1].n = 4; /* a reduction that forgot to keep the axis as 1 */
  CHECK(!graph_check(r.g, NULL));
  r.g->output->shape.d[1].n = 1;
  r.g->output->in[0] = r.g->output; /* an operand that is not earlier */
  CHECK(!graph_check(r.g, NULL));
  arena_free(r.a);
}
