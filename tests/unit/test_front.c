/* Unit tests of the lexer and the parser (src/front/lex.c, parse.c).
   Expressions are checked through a compact S-expression printout of the
   AST; errors through the first line of the diagnostic. */
#include <setjmp.h>
#include <stdlib.h>

#include "../../src/front/front.h"
#include "unit.h"

/* ---- helpers ---- */

static char diag[4096];   /* the diagnostic of the last failed call */

/* Read everything written to fp into diag. */
static void slurp(FILE *fp) {
  diag[0] = 0;
  if (!fp) return;
  rewind(fp);
  size_t n = fread(diag, 1, sizeof diag - 1, fp);
  diag[n] = 0;
  fclose(fp);
}

/* The first line of diag (`file:line:col: error: msg`). */
static const char *diag_line(void) {
  static char line[1024];
  size_t k = 0;
  while (diag[k] && diag[k] != '\n' && k < sizeof line - 1) {
    line[k] = diag[k];
    k++;
  }
  line[k] = 0;
  return line;
}

static bool diag_has(const char *s) { return strstr(diag, s) != NULL; }

/* Lex src; returns false (and fills diag) on an error. */
static bool lex(Arena *a, const char *src, size_t len, TokenList *out) {
  Ctx c;
  FILE *fp = tmpfile();
  ctx_init(&c, a, fp);
  jmp_buf jb;
  c.unwind = &jb;
  SrcFile *f = src_from_string(a, "t.lean", src, len);
  if (setjmp(jb)) {
    slurp(fp);
    return false;
  }
  *out = lex_file(&c, f);
  slurp(fp);
  return true;
}

static bool parse(Arena *a, const char *src, size_t len, Program *prog) {
  Ctx c;
  FILE *fp = tmpfile();
  ctx_init(&c, a, fp);
  jmp_buf jb;
  c.unwind = &jb;
  SrcFile *f = src_from_string(a, "t.lean", src, len);
  if (setjmp(jb)) {
    slurp(fp);
    return false;
  }
  parse_file(&c, f, prog);
  slurp(fp);
  return true;
}

static bool parse_s(Arena *a, const char *src, Program *prog) {
  return parse(a, src, strlen(src), prog);
}

/* ---- S-expression printer ---- */

typedef struct Buf { char s[8192]; size_t n; } Buf;

static void put(Buf *b, const char *s) {
  size_t m = strlen(s);
  if (b->n + m >= sizeof b->s) m = sizeof b->s - 1 - b->n;
  memcpy(b->s + b->n, s, m);
  b->n += m;
  b->s[b->n] = 0;
}

static void sx(Buf *b, const Ast *e);

static void sx_type(Buf *b, const TypeAst *t) {
  char tmp[64];
  switch (t->kind) {
  case TY_NAT: put(b, "Nat"); break;
  case TY_INT: put(b, "Int"); break;
  case TY_FLOAT: put(b, "Float"); break;
  case TY_SHAPE: put(b, "Shape"); break;
  case TY_LIST: put(b, "(List "); sx_type(b, t->elem); put(b, ")"); break;
  case TY_ARROW:
    put(b, "(→ ");
    sx_type(b, t->from);
    put(b, " ");
    sx_type(b, t->to);
    put(b, ")");
    break;
  case TY_TENSOR: case TY_PARAM: case TY_INDEX:
    put(b, t->kind == TY_TENSOR ? "(Tensor" : t->kind == TY_PARAM ? "(Param" : "(Index");
    if (t->shapevar) {
      put(b, " ");
      put(b, t->shapevar);
    } else {
      put(b, " [");
      for (int k = 0; k < t->ndims; k++) {
        if (k) put(b, " ");
        sx(b, t->dims[k]);
      }
      put(b, "]");
    }
    put(b, ")");
    break;
  }
  (void)tmp;
}

static void sx(Buf *b, const Ast *e) {
  char tmp[64];
  switch (e->kind) {
  case AST_NAT: snprintf(tmp, sizeof tmp, "%lld", (long long)e->nat); put(b, tmp); break;
  case AST_FLOAT: snprintf(tmp, sizeof tmp, "%g", e->fnum); put(b, tmp); break;
  case AST_STR: put(b, "\""); put(b, e->name); put(b, "\""); break;
  case AST_VAR: put(b, e->name); break;
  case AST_APP:
    put(b, "(");
    sx(b, e->a);
    for (int k = 0; k < e->nargs; k++) {
      put(b, " ");
      if (e->argnames && e->argnames[k]) {
        put(b, e->argnames[k]);
        put(b, ":=");
      }
      sx(b, e->args[k]);
    }
    put(b, ")");
    break;
  case AST_BINOP:
    put(b, "(");
    put(b, e->name);
    put(b, " ");
    sx(b, e->a);
    put(b, " ");
    sx(b, e->b);
    put(b, ")");
    break;
  case AST_NEG: put(b, "(neg "); sx(b, e->a); put(b, ")"); break;
  case AST_TRANSPOSE: put(b, "(T "); sx(b, e->a); put(b, ")"); break;
  case AST_INDEX: put(b, "(idx "); sx(b, e->a); put(b, " "); sx(b, e->b); put(b, ")"); break;
  case AST_LIST:
    put(b, "[");
    for (int k = 0; k < e->nargs; k++) {
      if (k) put(b, " ");
      sx(b, e->args[k]);
    }
    put(b, "]");
    break;
  case AST_LET:
    put(b, "(let ");
    put(b, e->name);
    if (e->type) {
      put(b, " : ");
      sx_type(b, e->type);
    }
    put(b, " ");
    sx(b, e->a);
    put(b, " ");
    sx(b, e->b);
    put(b, ")");
    break;
  case AST_FUN:
    put(b, "(fun");
    for (int k = 0; k < e->nparams; k++) {
      put(b, " ");
      put(b, e->params[k].name);
    }
    put(b, " ");
    sx(b, e->a);
    put(b, ")");
    break;
  case AST_PAREN: put(b, "{"); sx(b, e->a); put(b, "}"); break;
  }
}

/* The body of the last declaration of src, printed; or "ERR". */
static const char *body_of(const char *src) {
  static Buf b;
  b.n = 0;
  b.s[0] = 0;
  Arena *a = arena_new();
  Program prog = {0};
  if (!parse_s(a, src, &prog) || prog.ndecls == 0) {
    arena_free(a);
    return "ERR";
  }
  sx(&b, prog.decls[prog.ndecls - 1]->body);
  arena_free(a);
  return b.s;
}

/* `def t := <e>` */
static const char *expr_of(const char *e) {
  static char src[4096];
  snprintf(src, sizeof src, "def t := %s\n", e);
  return body_of(src);
}

/* Error message of src (first diagnostic line), or "" if it parsed. */
static const char *err_of(const char *src) {
  Arena *a = arena_new();
  Program prog = {0};
  bool ok = parse_s(a, src, &prog);
  arena_free(a);
  return ok ? "" : diag_line();
}

/* ---- lexer ---- */

TEST(lex_basic_tokens) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "def f (x : Tensor [4]) := x + 1";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 15);
  CHECK(t.data[0].kind == TK_KEYWORD && !strcmp(t.data[0].text, "def"));
  CHECK(t.data[1].kind == TK_IDENT && !strcmp(t.data[1].text, "f"));
  CHECK(t.data[2].kind == TK_PUNCT && !strcmp(t.data[2].text, "("));
  CHECK(t.data[4].kind == TK_PUNCT && !strcmp(t.data[4].text, ":"));
  CHECK(t.data[7].kind == TK_NAT && t.data[7].nat == 4);
  CHECK(t.data[10].kind == TK_PUNCT && !strcmp(t.data[10].text, ":="));
  CHECK(t.data[13].kind == TK_NAT && t.data[13].nat == 1);
  CHECK(t.data[14].kind == TK_EOF);
  CHECK(t.data[0].bol && t.data[0].pos.col == 1 && t.data[0].pos.line == 1);
  CHECK(!t.data[1].bol && t.data[1].space_before && t.data[1].pos.col == 5);
  CHECK(!t.data[3].space_before);  /* x right after ( */
  arena_free(a);
}

TEST(lex_unicode_operators) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "a ⬝ b → c -> d ≤ <= ≥ >= ≠ != == ↦ => λ fun |> <|";
  REQUIRE(lex(a, src, strlen(src), &t));
  const char *want[] = {"a", "⬝", "b", "→", "c", "→", "d", "≤", "≤", "≥", "≥", "≠", "≠",
                        "==", "=>", "=>", "fun", "fun", "|>", "<|"};
  REQUIRE(t.len == 21);
  for (int k = 0; k < 20; k++) CHECK_STR(t.data[k].text, want[k]);
  CHECK(t.data[16].kind == TK_KEYWORD);  /* λ */
  /* columns count code points: "a ⬝ b" puts b at column 5 */
  CHECK(t.data[2].pos.col == 5);
  CHECK(t.data[1].pos.len == 3);  /* ⬝ is three bytes */
  arena_free(a);
}

TEST(lex_transpose_splits_from_name) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "kᵀ W₁ x' αβ xᵢ ℓ h! p?";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 10);
  CHECK(t.data[0].kind == TK_IDENT && !strcmp(t.data[0].text, "k"));
  CHECK(t.data[1].kind == TK_PUNCT && !strcmp(t.data[1].text, "ᵀ"));
  CHECK(!t.data[1].space_before && t.data[1].pos.col == 2);
  CHECK(t.data[2].kind == TK_IDENT && !strcmp(t.data[2].text, "W₁"));
  CHECK(t.data[3].kind == TK_IDENT && !strcmp(t.data[3].text, "x'"));
  CHECK(t.data[4].kind == TK_IDENT && !strcmp(t.data[4].text, "αβ"));
  CHECK(t.data[5].kind == TK_IDENT && !strcmp(t.data[5].text, "xᵢ"));
  CHECK(t.data[6].kind == TK_IDENT && !strcmp(t.data[6].text, "ℓ"));
  CHECK(t.data[7].kind == TK_IDENT && !strcmp(t.data[7].text, "h!"));
  CHECK(t.data[8].kind == TK_IDENT && !strcmp(t.data[8].text, "p?"));
  arena_free(a);
}

TEST(lex_dotted_names) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "Nat.fold Tilesmith.softmax x.1 a . b";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 9);
  CHECK_STR(t.data[0].text, "Nat.fold");
  CHECK_STR(t.data[1].text, "Tilesmith.softmax");
  CHECK_STR(t.data[2].text, "x");
  CHECK_STR(t.data[3].text, ".");
  CHECK(t.data[4].kind == TK_NAT);
  CHECK_STR(t.data[5].text, "a");
  CHECK_STR(t.data[6].text, ".");
  arena_free(a);
}

TEST(lex_numbers) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "4096 0.5 1e-6 2.5E+3 3e4 0x1F 1. 9223372036854775807 0b101";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 11);
  CHECK(t.data[0].kind == TK_NAT && t.data[0].nat == 4096);
  CHECK(t.data[1].kind == TK_FLOAT && t.data[1].fnum == 0.5);
  CHECK(t.data[2].kind == TK_FLOAT && fabs(t.data[2].fnum - 1e-6) < 1e-20);
  CHECK(t.data[3].kind == TK_FLOAT && t.data[3].fnum == 2500.0);
  CHECK(t.data[4].kind == TK_FLOAT && t.data[4].fnum == 30000.0);
  CHECK(t.data[5].kind == TK_NAT && t.data[5].nat == 31);
  CHECK(t.data[6].kind == TK_NAT && t.data[6].nat == 1);
  CHECK(t.data[7].kind == TK_PUNCT && !strcmp(t.data[7].text, "."));
  CHECK(t.data[8].kind == TK_NAT && t.data[8].nat == INT64_MAX);
  CHECK(t.data[9].kind == TK_NAT && t.data[9].nat == 5);
  arena_free(a);
}

TEST(lex_number_errors) {
  Arena *a = arena_new();
  TokenList t;
  CHECK(!lex(a, "x := 12ab", 9, &t));
  CHECK(diag_has("t.lean:1:6: error: invalid number '12ab'"));
  CHECK(!lex(a, "9223372036854775808", 19, &t));
  CHECK(diag_has("too large"));
  CHECK(!lex(a, "1e999", 5, &t));
  CHECK(diag_has("too large for a Float"));
  CHECK(!lex(a, "0x", 2, &t));
  CHECK(diag_has("expected hexadecimal digits"));
  CHECK(!lex(a, "3e", 2, &t));
  arena_free(a);
}

TEST(lex_comments) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "a -- line\n/- outer /- inner -/ still -/ b /-- The doc.\n  -/\nc";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 5);
  CHECK_STR(t.data[0].text, "a");
  CHECK(t.data[1].kind == TK_IDENT && !strcmp(t.data[1].text, "b"));
  CHECK(t.data[1].bol && t.data[1].space_before);  /* first token, after a comment */
  CHECK(t.data[2].kind == TK_DOC && !strcmp(t.data[2].text, "The doc."));
  CHECK(t.data[3].kind == TK_IDENT && t.data[3].bol && t.data[3].pos.line == 4);
  /* a comment line does not make the next token's line number wrong */
  CHECK(t.data[1].pos.line == 2 && t.data[1].pos.col == 31);
  arena_free(a);
}

TEST(lex_unterminated) {
  Arena *a = arena_new();
  TokenList t;
  CHECK(!lex(a, "a /- x /- y -/", 14, &t));
  CHECK(diag_has("t.lean:1:3: error: unterminated block comment (opened here)"));
  CHECK(!lex(a, "/-- doc", 7, &t));
  CHECK(diag_has("unterminated doc comment"));
  CHECK(!lex(a, "x \"abc", 6, &t));
  CHECK(diag_has("t.lean:1:3: error: unterminated string"));
  arena_free(a);
}

TEST(lex_strings) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "\"a\\\"b\\\\c\\n\" \"é\"";
  REQUIRE(lex(a, src, strlen(src), &t));
  REQUIRE(t.len == 3);
  CHECK(t.data[0].kind == TK_STR && !strcmp(t.data[0].text, "a\"b\\c\n"));
  CHECK(t.data[1].kind == TK_STR && !strcmp(t.data[1].text, "é"));
  CHECK(!lex(a, "\"\\q\"", 4, &t));
  CHECK(diag_has("unknown escape"));
  arena_free(a);
}

TEST(lex_bad_bytes) {
  Arena *a = arena_new();
  TokenList t;
  CHECK(!lex(a, "ab\xff", 3, &t));
  CHECK(diag_has("t.lean:1:3: error: invalid UTF-8 byte 0xFF"));
  CHECK(!lex(a, "a\0b", 3, &t));
  CHECK(diag_has("t.lean:1:2: error: unexpected NUL byte"));
  CHECK(!lex(a, "-- \xc0\x80\n", 6, &t));  /* overlong, inside a comment */
  CHECK(diag_has("invalid UTF-8"));
  CHECK(!lex(a, "x\x01", 2, &t));
  CHECK(diag_has("control character U+0001"));
  /* truncated multi-byte sequence at the end */
  CHECK(!lex(a, "x \xe2\x8a", 4, &t));
  /* a byte-order mark is skipped; CRLF line ends work */
  REQUIRE(lex(a, "\xEF\xBB\xBF" "a\r\nb", 7, &t));
  CHECK(t.len == 3 && t.data[0].pos.col == 1 && t.data[1].bol && t.data[1].pos.line == 2);
  arena_free(a);
}

TEST(lex_unknown_char_is_a_token) {
  Arena *a = arena_new();
  TokenList t;
  const char *src = "theorem t : ∀ x, x ∘ y := by simp";
  REQUIRE(lex(a, src, strlen(src), &t));
  CHECK(t.data[3].kind == TK_PUNCT && !strcmp(t.data[3].text, "∀"));
  arena_free(a);
}

/* ---- parser: expressions ---- */

TEST(parse_precedence) {
  CHECK_STR(expr_of("a + b * c"), "(+ a (* b c))");
  CHECK_STR(expr_of("a * b + c"), "(+ (* a b) c)");
  CHECK_STR(expr_of("a ⬝ b / c"), "(/ (⬝ a b) c)");
  CHECK_STR(expr_of("a - b - c"), "(- (- a b) c)");
  CHECK_STR(expr_of("2^3^2"), "(^ 2 (^ 3 2))");
  CHECK_STR(expr_of("-x^2"), "(neg (^ x 2))");
  CHECK_STR(expr_of("-a*b"), "(* (neg a) b)");
  CHECK_STR(expr_of("a < b + c"), "(< a (+ b c))");
  CHECK_STR(expr_of("a <= b"), "(≤ a b)");
  CHECK_STR(expr_of("x - amax x"), "(- x (amax x))");
  CHECK_STR(expr_of("f a b + g c"), "(+ (f a b) (g c))");
  CHECK_STR(expr_of("a * -b"), "(* a (neg b))");
}

TEST(parse_application_and_postfix) {
  CHECK_STR(expr_of("(q ⬝ kᵀ) / sqrt D"), "(/ {(⬝ q (T k))} (sqrt D))");
  CHECK_STR(expr_of("h ⬝ W[l]"), "(⬝ h (idx W l))");
  CHECK_STR(expr_of("f [1, 2]"), "(f [1 2])");
  CHECK_STR(expr_of("reshape x [B, N * D]"), "(reshape x [B (* N D)])");
  CHECK_STR(expr_of("W[l]ᵀ"), "(T (idx W l))");
  CHECK_STR(expr_of("sum x (dim := 1)"), "(sum x dim:=1)");
  CHECK_STR(expr_of("concat [a, b] (dim := -1)"), "(concat [a b] dim:=(neg 1))");
  CHECK_STR(expr_of("[]"), "[]");
  CHECK_STR(expr_of("x |> f |> g a"), "(g a (f x))");
  CHECK_STR(expr_of("f <| g <| x"), "(f (g x))");
  CHECK_STR(expr_of("layers L h fun l h => h + l"), "(layers L h (fun l h (+ h l)))");
  CHECK_STR(expr_of("fun (x y : Nat) z => x"), "(fun x y z x)");
  CHECK_STR(expr_of("\"bf16\""), "\"bf16\"");
}

TEST(parse_let_layout) {
  CHECK_STR(body_of("def f (x : Tensor [4]) :=\n  let y := exp x\n  y + 1\n"),
            "(let y (exp x) (+ y 1))");
  CHECK_STR(body_of("def f :=\n  let y := g\n    x\n  h y\n"), "(let y (g x) (h y))");
  CHECK_STR(body_of("def f := let y := 1; let z := 2; y + z\n"),
            "(let y 1 (let z 2 (+ y z)))");
  CHECK_STR(body_of("def f :=\n  let g x y := x + y\n  g 1 2\n"),
            "(let g (fun x y (+ x y)) (g 1 2))");
  CHECK_STR(body_of("def f :=\n  let s : Float := 1.5\n  s\n"), "(let s : Float 1.5 s)");
  /* the operator on the next line, further right, continues the value */
  CHECK_STR(body_of("def f :=\n  let y := a\n     + b\n  y\n"), "(let y (+ a b) y)");
  /* inside parentheses lines may start anywhere */
  CHECK_STR(body_of("def f := (a\nb)\n"), "{(a b)}");
  /* a let body on a new line is not swallowed as application args */
  CHECK_STR(body_of("def f :=\n  let h := relu x\n  let h := layers L h (fun l h => h + relu (h ⬝ W[l]))\n  h ⬝ Wout\n"),
            "(let h (relu x) (let h (layers L h {(fun l h (+ h (relu {(⬝ h (idx W l))})))}) (⬝ h Wout)))");
}

TEST(parse_decl_ends_at_column_one) {
  Arena *a = arena_new();
  Program prog = {0};
  REQUIRE(parse_s(a, "def a := f x\n  y\ndef b := 2\nabbrev c := 3\n", &prog));
  REQUIRE(prog.ndecls == 3);
  CHECK_STR(prog.decls[0]->name, "a");
  CHECK(prog.decls[0]->body->kind == AST_APP && prog.decls[0]->body->nargs == 2);
  CHECK_STR(prog.decls[2]->name, "c");
  CHECK(program_find(&prog, "b") == prog.decls[1]);
  CHECK(program_find(&prog, "zz") == NULL);
  arena_free(a);
}

TEST(parse_binders) {
  Arena *a = arena_new();
  Program prog = {0};
  const char *src =
      "/-- Root-mean-square norm. -/\n"
      "def rmsnorm {B : Nat} (D : Nat) (x y : Tensor [B, D]) (g : Param [D])\n"
      "    (eps : Float := 1e-6) (s : List Nat) (f : Tensor [D] → Tensor [D]) : Tensor s :=\n"
      "  x\n";
  REQUIRE(parse_s(a, src, &prog));
  REQUIRE(prog.ndecls == 1);
  Decl *d = prog.decls[0];
  CHECK_STR(d->doc, "Root-mean-square norm.");
  CHECK(d->pos.line == 2 && d->pos.col == 5);
  REQUIRE(d->nparams == 8);
  CHECK(d->params[0].implicit && d->params[0].type->kind == TY_NAT);
  CHECK(!d->params[1].implicit);
  CHECK_STR(d->params[3].name, "y");
  CHECK(d->params[2].type == d->params[3].type);
  CHECK(d->params[3].type->kind == TY_TENSOR && d->params[3].type->ndims == 2);
  CHECK(d->params[4].type->kind == TY_PARAM);
  CHECK(d->params[5].deflt && d->params[5].deflt->kind == AST_FLOAT);
  CHECK(d->params[5].pos.line == 3 && d->params[5].pos.col == 6);
  CHECK(d->params[6].type->kind == TY_SHAPE);
  CHECK(d->params[7].type->kind == TY_ARROW);
  CHECK(d->ret->kind == TY_TENSOR && !strcmp(d->ret->shapevar, "s"));
  arena_free(a);
}

TEST(parse_index_type_and_list) {
  Arena *a = arena_new();
  Program prog = {0};
  REQUIRE(parse_s(a, "def f (t : Index [B]) (xs : List Float) (u : Tensor []) := t\n", &prog));
  Decl *d = prog.decls[0];
  CHECK(d->params[0].type->kind == TY_INDEX);
  CHECK(d->params[1].type->kind == TY_LIST && d->params[1].type->elem->kind == TY_FLOAT);
  CHECK(d->params[2].type->kind == TY_TENSOR && d->params[2].type->ndims == 0 &&
        !d->params[2].type->shapevar);
  arena_free(a);
}

TEST(parse_header_commands_and_skips) {
  Arena *a = arena_new();
  Program prog = {0};
  const char *src =
      "import Tilesmith\n"
      "open Tilesmith\n"
      "set_option maxRecDepth 1000\n"
      "namespace Foo\n"
      "/-- a theorem, skipped -/\n"
      "theorem t (x : Nat) : x + 0 = x := by\n"
      "  simp [Nat.add_zero] <;> rfl\n"
      "def after := 1\n"
      "@[simp] private def g := 2\n"
      "opaque exp : Tensor s → Tensor s\n"
      "instance : Add Foo where\n"
      "  add := fun a b => a ∘ b\n"
      "#eval g\n"
      "noncomputable section\n"
      "/-- doc for h -/\n"
      "def h := 3\n"
      "end\n"
      "end Foo\n";
  REQUIRE(parse_s(a, src, &prog));
  REQUIRE(prog.ndecls == 3);
  CHECK_STR(prog.decls[0]->name, "after");
  CHECK(prog.decls[0]->doc == NULL);
  CHECK_STR(prog.decls[1]->name, "g");
  CHECK_STR(prog.decls[2]->name, "h");
  CHECK_STR(prog.decls[2]->doc, "doc for h");
  arena_free(a);
}

TEST(parse_appends_to_program) {
  Arena *a = arena_new();
  Program prog = {0};
  REQUIRE(parse_s(a, "def f := 1\n", &prog));
  REQUIRE(parse_s(a, "def g := 2\ndef f := 3\n", &prog));
  CHECK(prog.ndecls == 3);
  CHECK(program_find(&prog, "f") == prog.decls[2]);
  arena_free(a);
}

TEST(parse_positions) {
  Arena *a = arena_new();
  Program prog = {0};
  REQUIRE(parse_s(a, "def f :=\n  a + g b\n", &prog));
  Ast *e = prog.decls[0]->body;
  CHECK(e->kind == AST_BINOP && e->pos.line == 2 && e->pos.col == 5);
  CHECK(e->b->kind == AST_APP && e->b->pos.col == 7);
  arena_free(a);
}

/* ---- parser: errors ---- */

TEST(parse_errors) {
  CHECK_STR(err_of("def f (x : Tensor [4]) x + 1\n"),
            "t.lean:1:24: error: expected ':=' after the parameters of 'f'");
  CHECK_STR(err_of("def f := (a + b\n"),
            "t.lean:1:16: error: expected ')' to close the '(' at 1:10, found the end of the file");
  CHECK_STR(err_of("def f := )\n"),
            "t.lean:1:10: error: expected the body of 'f' after ':=', found ')'");
  CHECK_STR(err_of("def f := a ∘ b\n"), "t.lean:1:12: error: unexpected character '∘'");
  CHECK_STR(err_of("def f := if a then b else c\n"),
            "t.lean:1:10: error: 'if' is not part of the tilesmith subset");
  CHECK_STR(err_of("def f := (a, b)\n"),
            "t.lean:1:12: error: tuples '(a, b)' are not part of the tilesmith subset");
  CHECK_STR(err_of("def f (x : Bool) := x\n"),
            "t.lean:1:12: error: expected a type (Nat, Int, Float, Shape, List Nat, Tensor [...], "
            "Param [...], Index [...], or T → U)");
  CHECK_STR(err_of("def f :=\n  let x := 1 in x\n"),
            "t.lean:2:14: error: expected ';' or a new line after the value of 'x'");
  CHECK_STR(err_of("def f :=\n  let x := 1\ndef g := 2\n"),
            "t.lean:3:1: error: expected the body of 'let x' after its value, found 'def'");
  CHECK_STR(err_of("def f := x\ny\n"),
            "t.lean:2:1: error: expected a declaration ('def ...'), found 'y' (indent the line to "
            "continue the previous definition)");
  CHECK_STR(err_of("def f := a = b\n"),
            "t.lean:1:12: error: '=' is not an operator of the tilesmith subset (write '==' to compare)");
  CHECK_STR(err_of("namespace A\nend B\n"),
            "t.lean:2:1: error: 'end B' does not close the innermost scope, 'namespace A' opened "
            "at 1:1; expected 'end A'");
  CHECK_STR(err_of("end\n"),
            "t.lean:1:1: error: 'end' without a matching 'namespace', 'section' or 'mutual'");
  CHECK_STR(err_of("def f := x.y.1\n"),
            "t.lean:1:13: error: projections and field access ('x.f') are not part of the "
            "tilesmith subset");
  CHECK_STR(err_of("def f x := x\n"),
            "t.lean:1:7: error: the parameter 'x' of 'f' needs a type: write '(x : T)'");
  CHECK_STR(err_of("def := 1\n"), "t.lean:1:5: error: expected a name after 'def', found ':='");
  CHECK_STR(err_of("def f := g x)\n"), "t.lean:1:13: error: unmatched ')'");
  CHECK_STR(err_of("def f := 1\nimport X\n"),
            "t.lean:2:1: error: 'import' must come before all other commands");
  CHECK(strstr(err_of("def f := a +\n"), "expected an expression after '+', found the end of the file"));
}

/* ---- robustness ---- */

static char *repeat(Arena *a, const char *pre, const char *unit, int n, const char *mid,
                    const char *unit2, const char *post) {
  size_t len = strlen(pre) + (strlen(unit) + strlen(unit2)) * (size_t)n + strlen(mid) +
               strlen(post) + 1;
  char *s = arena_alloc(a, len), *p = s;
  p += sprintf(p, "%s", pre);
  for (int k = 0; k < n; k++) p += sprintf(p, "%s", unit);
  p += sprintf(p, "%s", mid);
  for (int k = 0; k < n; k++) p += sprintf(p, "%s", unit2);
  sprintf(p, "%s", post);
  return s;
}

TEST(parse_nesting_limit) {
  Arena *a = arena_new();
  Program prog = {0};
  CHECK(parse_s(a, repeat(a, "def f := ", "(", 200, "x", ")", "\n"), &prog));
  CHECK(!parse_s(a, repeat(a, "def f := ", "(", 100000, "x", ")", "\n"), &prog));
  CHECK(diag_has("nesting too deep (more than 256 levels)"));
  CHECK(!parse_s(a, repeat(a, "def f := ", "[", 100000, "", "", "\n"), &prog));
  CHECK(diag_has("nesting too deep"));
  CHECK(!parse_s(a, repeat(a, "def f := ", "- ", 100000, "x", "", "\n"), &prog));
  CHECK(diag_has("nesting too deep"));
  CHECK(!parse_s(a, repeat(a, "def f := x", "^x", 100000, "", "", "\n"), &prog));
  CHECK(diag_has("nesting too deep"));
  CHECK(!parse_s(a, repeat(a, "def f (x : ", "List ", 100000, "Nat", "", ") := 1\n"), &prog));
  CHECK(diag_has("nesting too deep"));
  CHECK(!parse_s(a, repeat(a, "def f := ", "fun x => ", 100000, "x", "", "\n"), &prog));
  CHECK(diag_has("nesting too deep"));
  /* long flat chains are not nesting, but their trees are bounded too */
  CHECK(parse_s(a, repeat(a, "def f := x", " + x", 1000, "", "", "\n"), &prog));
  CHECK(!parse_s(a, repeat(a, "def f := x", " + x", 100000, "", "", "\n"), &prog));
  CHECK(diag_has("too deeply nested"));
  CHECK(parse_s(a, repeat(a, "def f :=\n", "  let x := 1\n", 1000, "  x\n", "", ""), &prog));
  CHECK(parse_s(a, repeat(a, "def f := [", "1, ", 100000, "2]\n", "", ""), &prog));
  arena_free(a);
}

TEST(parse_truncated_inputs) {
  /* every prefix of a valid program either parses or reports an error */
  const char *src =
      "/-- doc -/\ndef mlp (B D : Nat) (x : Tensor [B, D]) (W : Param [L, D, D])\n"
      "    (eps : Float := 1e-6) : Tensor [B, D] :=\n"
      "  let h := relu (x ⬝ W[0]ᵀ) -- comment\n"
      "  let h := layers L h (fun l h => h + relu (h ⬝ W[l]))\n"
      "  sum h (dim := -1) |> exp\n";
  size_t n = strlen(src);
  int ok = 0, bad = 0;
  for (size_t k = 0; k <= n; k++) {
    Arena *a = arena_new();
    Program prog = {0};
    if (parse(a, src, k, &prog)) ok++;
    else bad++;
    arena_free(a);
  }
  CHECK(ok > 0 && bad > 0);
  CHECK_STR(body_of(src),
            "(let h (relu {(⬝ x (T (idx W 0)))}) (let h (layers L h {(fun l h (+ h (relu {(⬝ h "
            "(idx W l))})))}) (exp (sum h dim:=(neg 1)))))");
}

TEST(parse_indented_scopes_and_in) {
  Arena *a = arena_new();
  Program prog = {0};
  const char *src =
      "namespace Foo\n"
      "  theorem t : True := by\n"
      "    trivial\n"
      "  def a := 1\n"
      "  open Bar in\n"
      "  def b := a\n"
      "  set_option maxHeartbeats 400 in\n"
      "  def c := b\n"
      "end Foo\n"
      "mutual\n"
      "def d := 1\n"
      "end\n"
      "section S\n"
      "def e := 2\n"
      "end S\n"
      "example : 1 = 1 := rfl\n";
  REQUIRE(parse_s(a, src, &prog));
  REQUIRE(prog.ndecls == 5);
  CHECK_STR(prog.decls[0]->name, "a");
  CHECK_STR(prog.decls[1]->name, "b");
  CHECK_STR(prog.decls[2]->name, "c");
  CHECK_STR(prog.decls[3]->name, "d");
  CHECK_STR(prog.decls[4]->name, "e");
  arena_free(a);
}

TEST(parse_doc_layout_column) {
  /* a doc comment on the line of the def sets the layout column */
  CHECK_STR(body_of("/-- d -/ def f :=\n  g\n   x\n"), "(g x)");
  /* doc comments inside a body are ignored */
  CHECK_STR(body_of("def f :=\n  /-- stray -/\n  g x\n"), "(g x)");
  /* an indented declaration ends at the next line at its own column */
  CHECK_STR(body_of("namespace N\n  def f := g\n    x\n  def h := y\nend N\n"), "y");
}

TEST(parse_many_decls_is_linear) {
  Arena *a = arena_new();
  Program prog = {0};
  int n = 100000;
  char *src = arena_alloc(a, (size_t)n * 24 + 1), *p = src;
  for (int k = 0; k < n; k++) p += sprintf(p, "def d%d := x + %d\n", k, k);
  REQUIRE(parse_s(a, src, &prog));
  CHECK(prog.ndecls == n);
  CHECK(program_find(&prog, "d99999") == prog.decls[n - 1]);
  arena_free(a);
}

TEST(parse_shared_binder_type_is_walked_once) {
  /* 20000 names sharing one type with a 20000-element shape: fast */
  Arena *a = arena_new();
  Program prog = {0};
  char *src = repeat(a, "def f (", "a ", 20000, ": Tensor [", "1, ", "1]) := a\n");
  CHECK(parse_s(a, src, &prog));
  src = repeat(a, "def f := fun (", "a ", 20000, ": Tensor [", "1, ", "1]) => a\n");
  CHECK(parse_s(a, src, &prog));
  arena_free(a);
}
