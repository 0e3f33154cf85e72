/* Unit tests of name resolution (src/front/resolve.c): every form Lean
   accepts loads, and every unknown name or statically wrong call is
   reported when the file is loaded, before anything is elaborated, in
   generic definitions as in concrete ones (the first line of the
   diagnostic is checked). */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/front/front.h"
#include "unit.h"

static char rdiag[4096];

/* Load src after the prelude into *prog; false (diagnostic in rdiag) on an
   error. */
static bool load_src(Arena *a, const char *src, Program *prog) {
  FILE *fp = tmpfile();
  Ctx c;
  ctx_init(&c, a, fp);
  jmp_buf jb;
  c.unwind = &jb;
  *prog = (Program){0};
  SrcFile *f = src_from_string(a, "t.lean", src, strlen(src));
  bool ok = false;
  if (setjmp(jb) == 0) {
    front_load(&c, prog, f);
    ok = true;
  }
  rewind(fp);
  size_t n = fread(rdiag, 1, sizeof rdiag - 1, fp);
  rdiag[n] = 0;
  fclose(fp);
  return ok;
}

/* src must fail to load, with `text` in the diagnostic. */
static void expect_rejected(const char *src, const char *text) {
  Arena *a = arena_new();
  Program prog;
  bool ok = load_src(a, src, &prog);
  CHECK(!ok);
  CHECK(strstr(rdiag, text) != NULL);
  if (ok || !strstr(rdiag, text)) fprintf(stderr, "  source: %s\n  diagnostic: %s\n", src, rdiag);
  arena_free(a);
}

/* The forms of the subset that Lean accepts, several generic (nothing here
   is elaborated: loading alone must accept them). */
static const char *const lean_forms =
    "import Tilesmith\n"
    "open Tilesmith\n"
    "set_option autoImplicit false\n"
    "opaque helper : Nat → Nat\n"
    "instance : Inhabited Nat := ⟨0⟩\n"
    "notation \"‖\" x \"‖\" => x\n"
    "theorem t : 1 = 1 := rfl\n"
    "structure Cfg where\n"
    "  d : Nat\n"
    "abbrev Act (s : Shape) := Tensor s\n"
    "abbrev Cfg2 := Cfg\n"
    "def g1 {s : Shape} (x : Tensor s) (dim : Int := -1) : Tensor s :=\n"
    "  let f y := y * 2\n"
    "  let z := x |> softmax\n"
    "  let w := softmax <| z\n"
    "  f (w + size x (dim := dim))\n"
    "def g2 (N D L : Nat) (x : Tensor [N, D]) (W : Param [L, D, D]) : Tensor [N, D] :=\n"
    "  layers L x (fun l h => h + relu (h ⬝ W[l]))\n"
    "def g3 (N D : Nat) (x : Tensor [N, D]) : Tensor [N, 1] :=\n"
    "  sum x (dim := 1) + Tilesmith.amax x 1\n"
    "def g4 (N : Nat) (x : Tensor [N * 2]) := reshape x [N, 2]\n"
    "def g5 (L N : Nat) (x : Tensor [N]) : Tensor [N] := layers L x (fun l => fun h => h + l)\n"
    "def step (l : Nat) (h : Tensor [4]) : Tensor [4] := h + l\n"
    "def g6 (L : Nat) (x : Tensor [4]) : Tensor [4] := layers L x step\n"
    "def g7 (L : Nat) (x : Tensor [4]) : Tensor [4] := layers L x (f := step)\n"
    "def g8 {B : Nat} (x : Tensor [B, 4]) := rmsnorm x (eps := 1e-5) (w := x)\n"
    "def g9 (x : Tensor [4]) := let y : Tensor [4] := x; fun (z : Tensor [4]) => y + z\n"
    "def g10 (x : Tensor [4]) := g9 x x\n"
    "def g11 (x : Tensor [4]) := (fun a b => a + b) x x\n"
    "def c := 3\n"
    "def g12 (x : Tensor [4]) := x * c * inf\n"
    "def part := g1 (dim := 0)\n"
    "def g13 (x : Tensor [3, 3]) := part x\n"
    "def g14 (B N H Dh : Nat) (x : Tensor [B, N, H * Dh]) := splitHeads B N H Dh x\n"
    "def g15 (N : Nat) (x : Tensor [N]) (eps : Float := 1e-6) (k : Nat := N + 1) := x * eps + k\n"
    "namespace Inner\n"
    "def g16 (x : Tensor [4]) := x\n"
    "end Inner\n"
    "def g17 (x : Tensor [4]) := Inner.g16 x\n";

TEST(resolve_accepts_lean_forms) {
  Arena *a = arena_new();
  Program prog;
  bool ok = load_src(a, lean_forms, &prog);
  CHECK(ok);
  if (!ok) fprintf(stderr, "  diagnostic: %s\n", rdiag);
  arena_free(a);
}

TEST(resolve_rejects_unknown_names_in_generic_definitions) {
  /* the case: a generic definition, never elaborated */
  expect_rejected("def u (N D : Nat) (x y : Tensor [N, D]) : Tensor [N, D] := softmaxx x + y",
                  "t.lean:1:60: error: unknown name 'softmaxx'; did you mean 'softmax'?");
  /* in a binder's type, the result type, a default, a let's type */
  expect_rejected("def u (Heads : Nat) (x : Tensor [Head, 4]) := x", "unknown name 'Head'; did you mean 'Heads'?");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) : Tensor [Q] := x", "unknown name 'Q'");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) (e : Float := epsilon) := x", "unknown name 'epsilon'");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := let y : Tensor [M] := x; y", "unknown name 'M'");
  expect_rejected("def u {s : Shape} (x : Tensor t) := x", "unknown shape variable 't'");
  /* binders see only the binders before them, as in Lean */
  expect_rejected("def u (x : Tensor [N]) (N : Nat) := x", "unknown name 'N'");
  /* a let does not see itself; a fun's parameters end with its body */
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := let y := y + x; y", "unknown name 'y'");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := (fun z => z) x + z", "unknown name 'z'");
  /* declarations: earlier ones only */
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := u x", "'u' is not defined yet here");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := v x\ndef v (x : Tensor [4]) := x",
                  "'v' is not defined yet here");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := x.exp", "projection notation is not part");
  /* a name declared only for Lean (opaque) is not a value tilesmith knows */
  expect_rejected("opaque helper : Nat → Nat\ndef u (N : Nat) (x : Tensor [N]) := x * helper N",
                  "unknown name 'helper'");
}

TEST(resolve_checks_static_arities) {
  expect_rejected("def u (N : Nat) (x : Tensor [N, N]) := softmax x 0 1",
                  "1:52: error: too many arguments: 'softmax' takes 2 explicit parameters (x, dim), and its "
                  "result is not a function");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := exp x x", "'exp' takes 1 explicit parameter (x)");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := inf x", "'inf' takes no explicit parameters");
  expect_rejected("def d (N : Nat) (x : Tensor [N]) : Tensor [N] := x\n"
                  "def u (N : Nat) (x : Tensor [N]) := d N x x",
                  "'d' takes 2 explicit parameters (N, x)");
  /* a declaration whose body is an operation returns a value */
  expect_rejected("def d (N : Nat) (x : Tensor [N]) := x + x\n"
                  "def u (N : Nat) (x : Tensor [N]) := d N x x",
                  "too many arguments: 'd'");
  expect_rejected("def u (N : Nat) (x : Tensor [N, 8]) (w : Param [8]) := rmsnorm x w (esp := 1e-5)",
                  "'rmsnorm' has no parameter named 'esp'; did you mean 'eps'?");
  expect_rejected("def u (N : Nat) (x : Tensor [N]) := sum x (dim := 0) (dim := 0)",
                  "parameter 'dim' of 'sum' is given twice");
}

TEST(resolve_checks_the_function_of_layers) {
  const char *msg = "'layers' passes its function two arguments, the layer index and the carried value";
  expect_rejected("def u (L N : Nat) (x : Tensor [N]) := layers L x (fun h => relu h)", msg);
  expect_rejected("def u (L N : Nat) (x : Tensor [N]) := layers L x (fun h => h * 2)", "1:51: error: ");
  expect_rejected("def u (L N : Nat) (x : Tensor [N]) := layers L x (fun l h c => h)",
                  "this 'fun' needs 3 parameters (l, h, c)");
  expect_rejected("def u (L N : Nat) (x : Tensor [N]) := layers L x relu", "but 'relu' takes 1 parameter (x)");
  expect_rejected("def s (x : Tensor [4]) : Tensor [4] := x\n"
                  "def u (L : Nat) (x : Tensor [4]) := layers L x (f := s)",
                  "but 's' takes 1 parameter (x)");
}

/* What the pass records for later declarations and for elaboration. */
TEST(resolve_records_types_and_results) {
  Arena *a = arena_new();
  Program prog;
  REQUIRE(load_src(a, lean_forms, &prog));
  CHECK(program_find(&prog, "Shape")->is_type);
  CHECK(program_find(&prog, "Tensor")->is_type);
  CHECK(program_find(&prog, "Param")->is_type);
  CHECK(program_find(&prog, "Act")->is_type);
  CHECK(program_find(&prog, "Cfg2")->is_type);
  CHECK(!program_find(&prog, "softmax")->is_type);
  CHECK(program_find(&prog, "softmax")->returns_value);
  CHECK(program_find(&prog, "mean")->returns_value);     /* no result type: the body decides */
  CHECK(program_find(&prog, "c")->returns_value);
  CHECK(!program_find(&prog, "g9")->returns_value);      /* returns a fun */
  CHECK(!program_find(&prog, "part")->returns_value);    /* a partial application */
  arena_free(a);
}

/* Does the definition `name` of prog elaborate with no sizes given? */
static bool elaborates(Arena *a, const Program *prog, const char *name) {
  FILE *fp = tmpfile();
  Ctx c;
  ctx_init(&c, a, fp);
  jmp_buf jb;
  c.unwind = &jb;
  if (setjmp(jb)) {
    fclose(fp);
    return false;
  }
  elab_entry(&c, prog, name, (Pos){0}, NULL, 0);
  fclose(fp);
  return true;
}

/* docs/LANGUAGE.md promises that its `lean` examples pass `tilesmith
   check`: each block loads (every name resolved) and each of its concrete
   instances (definitions without parameters) elaborates. */
TEST(language_doc_examples_check) {
  Arena *a = arena_new();
  char err[256];
  SrcFile *doc = src_load(a, "docs/LANGUAGE.md", err, sizeof err);
  REQUIRE(doc);
  int blocks = 0, instances = 0;
  const char *fence = "```lean\n";
  for (const char *p = strstr(doc->text, fence); p; p = strstr(p, fence)) {
    p += strlen(fence);
    const char *end = strstr(p, "```");
    REQUIRE(end);
    char *src = arena_strndup(a, p, (size_t)(end - p));
    blocks++;
    Program prog;
    bool ok = load_src(a, src, &prog);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  example %d: %s\n", blocks, rdiag);
    for (int i = 0; ok && i < prog.ndecls; i++) {
      const Decl *d = prog.decls[i];
      if (d->file->is_prelude || d->nparams || d->is_type) continue;
      bool g = elaborates(a, &prog, d->name);
      CHECK(g);
      if (!g) fprintf(stderr, "  example %d: '%s' does not elaborate\n", blocks, d->name);
      instances++;
    }
    p = end + 3;
  }
  CHECK(blocks >= 4);
  CHECK(instances >= 3);
  arena_free(a);
}
