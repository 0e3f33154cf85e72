/*
 * parse.c: the parser, from tokens to declarations.
 *
 * A recursive-descent parser over the TokenList of lex.c, one function per
 * grammar rule, the rule written above it.  Binary operators are parsed by
 * precedence climbing with Lean's precedences (comparisons 50, `+ -` 65,
 * `* / ⬝` 70, `^` 75 right-associative, prefix `-` 75).  Every node keeps the
 * Pos of the token that names it: the operator of a binary operation, the
 * function of an application, the name bound by a `let`.
 *
 * Layout follows Lean's `colGt`: the parser keeps a layout column.  A
 * declaration sets it to the column where the declaration starts; a `let`
 * sets it to its own column while its value is parsed; brackets reset it to
 * 0 (inside `( )` and `[ ]` lines may start anywhere).  An argument or an
 * operator that starts a line at or left of the layout column ends the term,
 * so the body of a `let` on the next line is not taken for an argument, and
 * a `def` at column 1 ends the previous declaration.
 *
 * Doc comments are taken out of the token stream up front and remembered
 * beside the token that follows them; a declaration takes the one before
 * its first token.  Lean-only commands (theorem, opaque, instance, ...) are
 * skipped up to the next command keyword that starts a line at or left of
 * the skipped command's column.
 *
 * Robustness: nesting (parentheses, `^` chains, prefix minus, nested `fun`,
 * types) is capped at MAX_NEST levels, and after each declaration an
 * iterative walk bounds the height of its tree (MAX_TREE_HEIGHT), so later
 * stages that recurse over the AST cannot overflow the stack either.  All
 * memory comes from the Ctx's arena; every error goes through ts_error.
 */
#include "front.h"

#include <stdarg.h>
#include <string.h>

#define MAX_NEST 256
#define MAX_TREE_HEIGHT 2000

typedef struct Scope {
  const char *kind;        /* "namespace", "section", "mutual" */
  const char *name;        /* NULL for an anonymous section or mutual */
  Pos pos;
} Scope;

typedef struct Walk { const void *node; bool is_type; int height; } Walk;

typedef struct Parser {
  Ctx *c;
  const SrcFile *f;
  Token *t;                /* the tokens without doc comments; ends with TK_EOF */
  const Token **doc;       /* doc[i]: the doc comment just before t[i], or NULL */
  int n, i;
  int layout;              /* a continuation must start right of this column */
  int depth;               /* current nesting, capped at MAX_NEST */
  bool seen_command;       /* a command other than `import` was parsed */
  VEC(Scope) scopes;
  VEC(Decl *) decls;
  VEC(const char *) type_names; /* declared by skipped structure/inductive/class */
  VEC(Walk) walk;          /* scratch stack of check_height */
} Parser;

/* ---- tokens ---- */

static Token *tok(Parser *P) { return &P->t[P->i]; }
static Token *peek(Parser *P, int k) {
  return &P->t[P->i + k < P->n ? P->i + k : P->n - 1];
}
static void next(Parser *P) {
  if (P->t[P->i].kind != TK_EOF) P->i++;
}
static bool is_punct(const Token *t, const char *s) {
  return t->kind == TK_PUNCT && strcmp(t->text, s) == 0;
}
static bool is_kw(const Token *t, const char *s) {
  return t->kind == TK_KEYWORD && strcmp(t->text, s) == 0;
}
static bool in_list(const char *s, const char *const *list) {
  for (int k = 0; list[k]; k++)
    if (strcmp(s, list[k]) == 0) return true;
  return false;
}

/* Does t end the current term by the layout rule? */
static bool stops(Parser *P, const Token *t) {
  return t->kind == TK_EOF || (t->bol && (int)t->pos.col <= P->layout);
}

/* Punctuators lex.c produces on purpose; any other TK_PUNCT is a character
   the subset does not know. */
static const char *const known_puncts[] = {
    ":=", "=>", "→", "≤", "≥", "≠", "==", "<|", "|>", "@[", "⬝", "ᵀ", "×",
    "(",  ")",  "[", "]", "{", "}", ",", ":", ";", ".", "+", "-", "*",
    "/",  "^",  "<", ">", "@", "#", "%", "=", "!", "|", NULL,
};
static bool is_unknown_char(const Token *t) {
  return t->kind == TK_PUNCT && !in_list(t->text, known_puncts);
}

/* Keywords of Lean that have no place in the subset's terms. */
static const char *const foreign_kws[] = {
    "if", "then", "else", "match", "with", "do", "by", "have", "show", "from",
    "calc", "return", "where", NULL,
};

/* Keywords and punctuators that begin a command (end a skipped one). */
static const char *const command_kws[] = {
    "def", "abbrev", "theorem", "lemma", "example", "opaque", "axiom",
    "instance", "class", "structure", "inductive", "notation", "infix",
    "infixl", "infixr", "prefix", "postfix", "macro", "macro_rules", "syntax",
    "attribute", "universe", "variable", "set_option", "import", "open",
    "namespace", "section", "end", "mutual", "deriving", "export", "elab",
    "elab_rules", "declare_syntax_cat", "private", "protected",
    "noncomputable", "partial", "unsafe", "local", "scoped", NULL,
};
static const char *const modifier_kws[] = {
    "private", "protected", "noncomputable", "partial", "unsafe", "local",
    "scoped", NULL,
};
/* Commands the compiler does not evaluate: skipped. */
static const char *const skipped_kws[] = {
    "theorem", "lemma", "example", "opaque", "axiom", "instance", "class",
    "structure", "inductive", "notation", "infix", "infixl", "infixr",
    "prefix", "postfix", "macro", "macro_rules", "syntax", "attribute",
    "universe", "variable", "deriving", "export", "elab", "elab_rules",
    "declare_syntax_cat", NULL,
};

static bool is_command_start(const Token *t) {
  if (t->kind == TK_KEYWORD) return in_list(t->text, command_kws);
  return is_punct(t, "@[") || is_punct(t, "#");
}

/* ---- messages ---- */

static char *vfmt(Parser *P, const char *fmt, va_list ap) {
  if (!fmt) return "";  /* never; it keeps GCC 12's -Wformat-truncation quiet */
  char small[256];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  char *buf = arena_alloc(P->c->arena, (size_t)n + 1);
  if ((size_t)n < sizeof small) memcpy(buf, small, (size_t)n + 1);
  else vsnprintf(buf, (size_t)n + 1, fmt, ap);
  return buf;
}

static char *fmt(Parser *P, const char *f, ...) TS_PRINTF(2, 3);
static char *fmt(Parser *P, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = vfmt(P, f, ap);
  va_end(ap);
  return s;
}

/* Invisible or confusable characters are shown by code point. */
static bool is_invisible(uint32_t cp) {
  return cp <= 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD ||
         (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
         (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF ||
         (cp >= 0x300 && cp <= 0x36F);
}

/* How a token is named in a message: 'foo', ')', the end of the file. */
static const char *desc(Parser *P, const Token *t) {
  switch (t->kind) {
  case TK_EOF: return "the end of the file";
  case TK_STR: return "a string";
  case TK_DOC: return "a doc comment";
  default: break;
  }
  if (is_unknown_char(t)) {
    uint32_t cp = 0;
    utf8_decode((const unsigned char *)t->text, strlen(t->text), &cp);
    if (is_invisible(cp)) return fmt(P, "U+%04X", (unsigned)cp);
  }
  /* long names are cut at a code point boundary */
  size_t n = strlen(t->text);
  if (n <= 40) return fmt(P, "'%s'", t->text);
  size_t k = 40;
  while (k > 0 && ((unsigned char)t->text[k] & 0xC0) == 0x80) k--;
  return fmt(P, "'%.*s…'", (int)k, t->text);
}

static TS_NORETURN void fail_at(Parser *P, Pos p, const char *msg) {
  ts_error(P->c, p, "%s", msg);
}

/* Errors about the token itself take precedence over what was expected:
   a character the subset does not know, or a Lean keyword outside it. */
static void check_foreign(Parser *P, const Token *t) {
  if (is_unknown_char(t)) fail_at(P, t->pos, fmt(P, "unexpected character %s", desc(P, t)));
  if (t->kind == TK_KEYWORD && in_list(t->text, foreign_kws))
    fail_at(P, t->pos, fmt(P, "'%s' is not part of the tilesmith subset", t->text));
}

/* Report at token t: the message, unless t is itself the problem. */
static TS_NORETURN void fail(Parser *P, const Token *t, const char *f, ...) TS_PRINTF(3, 4);
static TS_NORETURN void fail(Parser *P, const Token *t, const char *f, ...) {
  check_foreign(P, t);
  va_list ap;
  va_start(ap, f);
  char *msg = vfmt(P, f, ap);
  va_end(ap);
  fail_at(P, t->pos, msg);
}

static void enter(Parser *P) {
  if (++P->depth > MAX_NEST)
    fail_at(P, tok(P)->pos, fmt(P, "nesting too deep (more than %d levels)", MAX_NEST));
}
static void leave(Parser *P) { P->depth--; }

/* ---- nodes ---- */

static Ast *new_ast(Parser *P, AstKind kind, Pos pos) {
  Ast *a = arena_alloc(P->c->arena, sizeof *a);
  a->kind = kind;
  a->pos = pos;
  return a;
}

static TypeAst *new_type(Parser *P, TypeKind kind, Pos pos) {
  TypeAst *t = arena_alloc(P->c->arena, sizeof *t);
  t->kind = kind;
  t->pos = pos;
  return t;
}

/* The span from token a to token b when both are on one line, else a. */
static Pos span(const Token *a, const Token *b) {
  Pos p = a->pos;
  if (b->pos.line == a->pos.line && b->pos.off >= a->pos.off)
    p.len = b->pos.off + b->pos.len - a->pos.off;
  return p;
}

/* Can t begin an expression? */
static bool starts_expr(const Token *t) {
  switch (t->kind) {
  case TK_IDENT: case TK_NAT: case TK_FLOAT: case TK_STR: return true;
  case TK_KEYWORD: return is_kw(t, "let") || is_kw(t, "fun");
  case TK_PUNCT: return is_punct(t, "(") || is_punct(t, "[") || is_punct(t, "-");
  default: return false;
  }
}

/* Error unless the current token can begin an expression; `what` says which
   expression is wanted ("the body of 'f' after ':='"). */
static void need_expr(Parser *P, const char *what) {
  Token *t = tok(P);
  if (!starts_expr(t)) fail(P, t, "expected %s, found %s", what, desc(P, t));
}

static Ast *parse_expr(Parser *P);
static Ast *parse_fun(Parser *P);
static Ast *parse_postfix(Parser *P);
static TypeAst *parse_type(Parser *P);

/* ---- types ---- */

/* dims = "[" (expr ("," expr)*)? "]"   (after Tensor, Param or Index) */
static void parse_dims(Parser *P, TypeAst *ty, const char *head) {
  Token *open = tok(P);
  next(P);
  int saved = P->layout;
  P->layout = 0;
  VEC(Ast *) dims = {0};
  if (!is_punct(tok(P), "]")) {
    for (;;) {
      need_expr(P, fmt(P, "a dimension in the shape of '%s'", head));
      vec_push(P->c->arena, &dims, parse_expr(P));
      if (is_punct(tok(P), ",")) {
        next(P);
        continue;
      }
      if (is_punct(tok(P), "]")) break;
      fail(P, tok(P), "expected ',' or ']' in the shape opened at %u:%u, found %s",
           open->pos.line, open->pos.col, desc(P, tok(P)));
    }
  }
  next(P);
  P->layout = saved;
  ty->dims = dims.data;
  ty->ndims = dims.len;
}

/* type1 = "Nat" | "Int" | "Float" | "Shape" | "List" type1
 *       | ("Tensor" | "Param" | "Index") ("[" (expr ("," expr)*)? "]" | ident)
 *       | "(" type ")" */
static TypeAst *parse_type1(Parser *P) {
  Token *t = tok(P);
  if (t->kind == TK_IDENT) {
    const char *s = t->text;
    if (!strcmp(s, "Nat") || !strcmp(s, "Int") || !strcmp(s, "Float") ||
        !strcmp(s, "Shape")) {
      next(P);
      return new_type(P, !strcmp(s, "Nat") ? TY_NAT : !strcmp(s, "Int") ? TY_INT
                         : !strcmp(s, "Float") ? TY_FLOAT : TY_SHAPE, t->pos);
    }
    if (!strcmp(s, "List")) {
      next(P);
      enter(P);
      TypeAst *elem = parse_type1(P);
      leave(P);
      TypeAst *ty = new_type(P, elem->kind == TY_NAT ? TY_SHAPE : TY_LIST, t->pos);
      ty->elem = elem;
      return ty;
    }
    if (!strcmp(s, "Tensor") || !strcmp(s, "Param") || !strcmp(s, "Index")) {
      next(P);
      TypeAst *ty = new_type(P, s[0] == 'T' ? TY_TENSOR : s[0] == 'P' ? TY_PARAM : TY_INDEX,
                             t->pos);
      Token *u = tok(P);
      if (is_punct(u, "[")) {
        parse_dims(P, ty, s);
      } else if (u->kind == TK_IDENT && !u->bol) {
        ty->shapevar = u->text;
        ty->shapevar_pos = u->pos;
        next(P);
      } else {
        fail(P, u, "expected the shape after '%s': '[d₀, d₁, …]' or a shape variable, found %s",
             s, desc(P, u));
      }
      return ty;
    }
  }
  if (is_punct(t, "(")) {
    next(P);
    int saved = P->layout;
    P->layout = 0;
    TypeAst *ty = parse_type(P);
    if (!is_punct(tok(P), ")"))
      fail(P, tok(P), "expected ')' to close the '(' at %u:%u, found %s", t->pos.line,
           t->pos.col, desc(P, tok(P)));
    next(P);
    P->layout = saved;
    return ty;
  }
  fail(P, t, "expected a type (Nat, Int, Float, Shape, List Nat, Tensor [...], "
             "Param [...], Index [...], or T → U)");
}

/* type = type1 ("→" type)? */
static TypeAst *parse_type(Parser *P) {
  enter(P);
  TypeAst *from = parse_type1(P);
  Token *t = tok(P);
  if (is_punct(t, "→")) {
    next(P);
    TypeAst *ty = new_type(P, TY_ARROW, t->pos);
    ty->from = from;
    ty->to = parse_type(P);
    from = ty;
  }
  leave(P);
  return from;
}

/* ---- binders ---- */

typedef VEC(Binder) Binders;

/* binder = "(" ident+ ":" type (":=" expr)? ")" | "{" ident+ ":" type "}"
 * In a `fun` or `let` the type is optional and there are no defaults. */
static void parse_binder_group(Parser *P, Binders *out, bool fun_style) {
  Token *open = tok(P);
  bool implicit = is_punct(open, "{");
  const char *close = implicit ? "}" : ")";
  next(P);
  int saved = P->layout;
  P->layout = 0;
  int first = out->len;
  while (tok(P)->kind == TK_IDENT) {
    Binder b = {0};
    b.name = tok(P)->text;
    b.pos = tok(P)->pos;
    b.implicit = implicit;
    vec_push(P->c->arena, out, b);
    next(P);
  }
  if (out->len == first)
    fail(P, tok(P), "expected a parameter name after '%s', found %s", open->text,
         desc(P, tok(P)));
  const char *last = out->data[out->len - 1].name;
  TypeAst *ty = NULL;
  Ast *deflt = NULL;
  if (is_punct(tok(P), ":")) {
    next(P);
    ty = parse_type(P);
  } else if (!fun_style) {
    fail(P, tok(P), "expected ':' and a type after the parameter '%s', found %s", last,
         desc(P, tok(P)));
  }
  if (!fun_style && !implicit && ty && is_punct(tok(P), ":=")) {
    next(P);
    need_expr(P, fmt(P, "the default value of '%s' after ':='", last));
    deflt = parse_expr(P);
  }
  if (!is_punct(tok(P), close))
    fail(P, tok(P), "expected '%s' to close the '%s' at %u:%u, found %s", close, open->text,
         open->pos.line, open->pos.col, desc(P, tok(P)));
  next(P);
  P->layout = saved;
  for (int k = first; k < out->len; k++) {
    out->data[k].type = ty;
    out->data[k].deflt = deflt;
  }
}

/* fun-binder = ident | "(" ident+ (":" type)? ")" | "{" ident+ (":" type)? "}" */
static void parse_fun_binders(Parser *P, Binders *out) {
  for (;;) {
    Token *t = tok(P);
    if (t->kind == TK_IDENT) {
      Binder b = {0};
      b.name = t->text;
      b.pos = t->pos;
      vec_push(P->c->arena, out, b);
      next(P);
    } else if (is_punct(t, "(") || is_punct(t, "{")) {
      parse_binder_group(P, out, true);
    } else {
      return;
    }
  }
}

/* ---- expressions ---- */

/* fun = "fun" fun-binder+ ("=>" | "↦") expr */
static Ast *parse_fun(Parser *P) {
  Token *kw = tok(P);
  next(P);
  Binders ps = {0};
  parse_fun_binders(P, &ps);
  if (ps.len == 0)
    fail(P, tok(P), "expected a parameter after 'fun', found %s", desc(P, tok(P)));
  if (!is_punct(tok(P), "=>"))
    fail(P, tok(P), "expected '=>' after the parameters of 'fun', found %s", desc(P, tok(P)));
  next(P);
  need_expr(P, "the body of 'fun' after '=>'");
  Ast *e = new_ast(P, AST_FUN, kw->pos);
  e->params = ps.data;
  e->nparams = ps.len;
  e->a = parse_expr(P);
  return e;
}

/* atom = nat | float | str | ident | "(" expr ")" | "[" (expr ("," expr)*)? "]"
 *      | fun | let-expr */
static Ast *parse_atom(Parser *P) {
  Token *t = tok(P);
  Ast *e;
  switch (t->kind) {
  case TK_NAT:
    e = new_ast(P, AST_NAT, t->pos);
    e->nat = t->nat;
    next(P);
    return e;
  case TK_FLOAT:
    e = new_ast(P, AST_FLOAT, t->pos);
    e->fnum = t->fnum;
    next(P);
    return e;
  case TK_STR:
    e = new_ast(P, AST_STR, t->pos);
    e->name = t->text;
    next(P);
    return e;
  case TK_IDENT:
    e = new_ast(P, AST_VAR, t->pos);
    e->name = t->text;
    next(P);
    return e;
  default: break;
  }
  if (is_kw(t, "fun")) return parse_fun(P);
  if (is_kw(t, "let")) return parse_expr(P);
  if (is_punct(t, "(")) {
    next(P);
    int saved = P->layout;
    P->layout = 0;
    need_expr(P, "an expression after '('");
    Ast *inner = parse_expr(P);
    Token *u = tok(P);
    if (is_punct(u, ","))
      fail(P, u, "tuples '(a, b)' are not part of the tilesmith subset");
    if (is_punct(u, ":"))
      fail(P, u, "type ascriptions '(e : T)' are not part of the tilesmith subset");
    if (!is_punct(u, ")"))
      fail(P, u, "expected ')' to close the '(' at %u:%u, found %s", t->pos.line, t->pos.col,
           desc(P, u));
    next(P);
    P->layout = saved;
    e = new_ast(P, AST_PAREN, span(t, u));
    e->a = inner;
    return e;
  }
  if (is_punct(t, "[")) {
    next(P);
    int saved = P->layout;
    P->layout = 0;
    VEC(Ast *) items = {0};
    if (!is_punct(tok(P), "]")) {
      for (;;) {
        need_expr(P, "a list element");
        vec_push(P->c->arena, &items, parse_expr(P));
        if (is_punct(tok(P), ",")) {
          next(P);
          continue;
        }
        if (is_punct(tok(P), "]")) break;
        fail(P, tok(P), "expected ',' or ']' in the list opened at %u:%u, found %s",
             t->pos.line, t->pos.col, desc(P, tok(P)));
      }
    }
    next(P);
    P->layout = saved;
    e = new_ast(P, AST_LIST, t->pos);
    e->args = items.data;
    e->nargs = items.len;
    return e;
  }
  fail(P, t, "expected an expression, found %s", desc(P, t));
}

/* postfix = atom ( "ᵀ" | "[" expr "]" )*     -- "[" only with no space before */
static Ast *parse_postfix(Parser *P) {
  Ast *e = parse_atom(P);
  for (;;) {
    Token *t = tok(P);
    if (stops(P, t)) return e;
    if (is_punct(t, "ᵀ")) {
      next(P);
      Ast *x = new_ast(P, AST_TRANSPOSE, t->pos);
      x->a = e;
      e = x;
    } else if (is_punct(t, "[") && !t->space_before) {
      next(P);
      int saved = P->layout;
      P->layout = 0;
      need_expr(P, "an index after '['");
      Ast *idx = parse_expr(P);
      if (!is_punct(tok(P), "]"))
        fail(P, tok(P), "expected ']' to close the '[' at %u:%u, found %s", t->pos.line,
             t->pos.col, desc(P, tok(P)));
      next(P);
      P->layout = saved;
      Ast *x = new_ast(P, AST_INDEX, t->pos);
      x->a = e;
      x->b = idx;
      e = x;
    } else if (is_punct(t, ".") && !t->space_before) {
      fail(P, t, "projections and field access ('x.f') are not part of the tilesmith subset");
    } else {
      return e;
    }
  }
}

/* Append argument x to f: `f a |> g b` gives g b (f a), one application. */
static Ast *apply(Parser *P, Ast *f, Ast *x, const char *name) {
  Ast *e = new_ast(P, AST_APP, f->pos);
  Ast *fn = f;
  int old = 0;
  if (f->kind == AST_APP) {
    fn = f->a;
    old = f->nargs;
  }
  e->a = fn;
  e->nargs = old + 1;
  e->args = arena_alloc(P->c->arena, sizeof(Ast *) * (size_t)e->nargs);
  e->argnames = arena_alloc(P->c->arena, sizeof(char *) * (size_t)e->nargs);
  for (int k = 0; k < old; k++) {
    e->args[k] = f->args[k];
    e->argnames[k] = f->argnames ? f->argnames[k] : NULL;
  }
  e->args[old] = x;
  e->argnames[old] = name;
  return e;
}

static bool starts_arg(const Token *t) {
  switch (t->kind) {
  case TK_IDENT: case TK_NAT: case TK_FLOAT: case TK_STR: return true;
  case TK_PUNCT: return is_punct(t, "(") || is_punct(t, "[");
  default: return false;
  }
}

/* app = postfix arg* (fun)?
 * arg = "(" ident ":=" expr ")" | postfix */
static Ast *parse_app(Parser *P) {
  Ast *f = parse_postfix(P);
  VEC(Ast *) args = {0};
  VEC(const char *) names = {0};
  for (;;) {
    Token *t = tok(P);
    if (stops(P, t)) break;
    if (is_punct(t, "(") && peek(P, 1)->kind == TK_IDENT && is_punct(peek(P, 2), ":=")) {
      Token *name = peek(P, 1);
      next(P);
      next(P);
      next(P);
      int saved = P->layout;
      P->layout = 0;
      need_expr(P, fmt(P, "the value of the argument '%s' after ':='", name->text));
      Ast *e = parse_expr(P);
      if (!is_punct(tok(P), ")"))
        fail(P, tok(P), "expected ')' to close the '(' at %u:%u, found %s", t->pos.line,
             t->pos.col, desc(P, tok(P)));
      next(P);
      P->layout = saved;
      vec_push(P->c->arena, &args, e);
      vec_push(P->c->arena, &names, name->text);
    } else if (is_kw(t, "fun")) {
      /* Lean allows a trailing `fun` argument without parentheses */
      vec_push(P->c->arena, &args, parse_fun(P));
      vec_push(P->c->arena, &names, NULL);
      break;
    } else if (starts_arg(t)) {
      vec_push(P->c->arena, &args, parse_postfix(P));
      vec_push(P->c->arena, &names, NULL);
    } else {
      break;
    }
  }
  if (args.len == 0) return f;
  Ast *e = new_ast(P, AST_APP, f->pos);
  e->a = f;
  e->args = args.data;
  e->argnames = names.data;
  e->nargs = args.len;
  return e;
}

static int binop_prec(const Token *t, bool *right) {
  *right = false;
  if (t->kind != TK_PUNCT) return -1;
  const char *s = t->text;
  if (!strcmp(s, "==") || !strcmp(s, "≠") || !strcmp(s, "<") || !strcmp(s, "≤") ||
      !strcmp(s, ">") || !strcmp(s, "≥"))
    return 50;
  if (!strcmp(s, "+") || !strcmp(s, "-")) return 65;
  if (!strcmp(s, "*") || !strcmp(s, "/") || !strcmp(s, "⬝")) return 70;
  if (!strcmp(s, "^")) {
    *right = true;
    return 75;
  }
  return -1;
}

/* After an operand: a token that can only be a misplaced operator. */
static void check_infix(Parser *P, const Token *t) {
  check_foreign(P, t);
  if (is_punct(t, "="))
    fail_at(P, t->pos, "'=' is not an operator of the tilesmith subset (write '==' to compare)");
  if (is_punct(t, "%") || is_punct(t, "×"))
    fail_at(P, t->pos, fmt(P, "'%s' is not an operator of the tilesmith subset", t->text));
}

static Ast *parse_binary(Parser *P, int min);

/* unary = "-" binary(75) | app */
static Ast *parse_unary(Parser *P) {
  Token *t = tok(P);
  if (!is_punct(t, "-")) return parse_app(P);
  next(P);
  enter(P);
  need_expr(P, "an expression after '-'");
  Ast *e = new_ast(P, AST_NEG, t->pos);
  e->a = parse_binary(P, 75);
  leave(P);
  return e;
}

/* binary = unary (op binary)*   by precedence climbing:
 *   == ≠ < ≤ > ≥  50 left,  + -  65 left,  * / ⬝  70 left,  ^  75 right */
static Ast *parse_binary(Parser *P, int min) {
  Ast *lhs = parse_unary(P);
  for (;;) {
    Token *t = tok(P);
    if (stops(P, t)) return lhs;
    bool right;
    int prec = binop_prec(t, &right);
    if (prec < 0) {
      check_infix(P, t);
      return lhs;
    }
    if (prec < min) return lhs;
    next(P);
    need_expr(P, fmt(P, "an expression after '%s'", t->text));
    enter(P);
    Ast *rhs = parse_binary(P, right ? prec : prec + 1);
    leave(P);
    Ast *e = new_ast(P, AST_BINOP, t->pos);
    e->name = t->text;
    e->a = lhs;
    e->b = rhs;
    lhs = e;
  }
}

/* pipe = binary ("|>" binary)* ("<|" expr)?
 *   x |> f  is  f x;   f <| x  is  f x (right-associative) */
static Ast *parse_pipe(Parser *P) {
  Ast *lhs = parse_binary(P, 0);
  for (;;) {
    Token *t = tok(P);
    if (stops(P, t)) return lhs;
    if (is_punct(t, "|>")) {
      next(P);
      need_expr(P, "a function after '|>'");
      Ast *f = parse_binary(P, 0);
      lhs = apply(P, f, lhs, NULL);
    } else if (is_punct(t, "<|")) {
      next(P);
      need_expr(P, "an argument after '<|'");
      return apply(P, lhs, parse_expr(P), NULL);
    } else {
      return lhs;
    }
  }
}

/* let-head = "let" ident fun-binder* (":" type)? ":=" expr (";" | newline)
 * `let f x := e` is `let f := fun x => e`.  The value is parsed with the
 * layout column at the `let`; the body keeps the enclosing column. */
static Ast *parse_let_head(Parser *P) {
  Token *kw = tok(P);
  next(P);
  Token *name = tok(P);
  if (name->kind != TK_IDENT)
    fail(P, name, "expected a name after 'let', found %s", desc(P, name));
  next(P);
  Binders ps = {0};
  parse_fun_binders(P, &ps);
  TypeAst *ty = NULL;
  if (is_punct(tok(P), ":")) {
    next(P);
    ty = parse_type(P);
  }
  if (!is_punct(tok(P), ":="))
    fail(P, tok(P), "expected ':=' after 'let %s', found %s", name->text, desc(P, tok(P)));
  next(P);
  int saved = P->layout;
  P->layout = (int)kw->pos.col;
  need_expr(P, fmt(P, "the value of '%s' after ':='", name->text));
  Ast *value = parse_expr(P);
  P->layout = saved;
  if (ps.len > 0) {
    Ast *fn = new_ast(P, AST_FUN, name->pos);
    fn->params = ps.data;
    fn->nparams = ps.len;
    fn->a = value;
    value = fn;
    ty = NULL;  /* it was the result type of the function */
  }
  Token *t = tok(P);
  if (is_punct(t, ";")) {
    next(P);
  } else if (t->kind != TK_EOF && !t->bol) {
    fail(P, t, "expected ';' or a new line after the value of '%s'", name->text);
  }
  need_expr(P, fmt(P, "the body of 'let %s' after its value", name->text));
  Ast *e = new_ast(P, AST_LET, name->pos);
  e->name = name->text;
  e->a = value;
  e->type = ty;
  return e;
}

/* expr = let-head* (fun | pipe)
 * A chain of lets is parsed in a loop, so a long body costs no nesting. */
static Ast *parse_expr(Parser *P) {
  enter(P);
  Ast *head = NULL, **tail = &head;
  while (is_kw(tok(P), "let")) {
    Ast *l = parse_let_head(P);
    *tail = l;
    tail = &l->b;
  }
  *tail = is_kw(tok(P), "fun") ? parse_fun(P) : parse_pipe(P);
  leave(P);
  return head;
}

/* ---- tree height ---- */

static void walk_push(Parser *P, const void *node, bool is_type, int h) {
  if (!node) return;
  Walk w = {node, is_type, h};
  vec_push(P->c->arena, &P->walk, w);
}

/* The binders of one group share their type and default: walk them once,
   or `(a a a ... : T)` would cost names × size of T. */
static void walk_binders(Parser *P, const Binder *bs, int n, int h) {
  for (int k = 0; k < n; k++) {
    bool same = k > 0 && bs[k].type == bs[k - 1].type && bs[k].deflt == bs[k - 1].deflt;
    if (same) continue;
    walk_push(P, bs[k].type, true, h);
    walk_push(P, bs[k].deflt, false, h);
  }
}

/* Error if some path from the root down a declaration is longer than
   MAX_TREE_HEIGHT (a long operator chain or let chain); iterative. */
static void check_height(Parser *P, const Decl *d) {
  P->walk.len = 0;
  walk_binders(P, d->params, d->nparams, 1);
  walk_push(P, d->ret, true, 1);
  walk_push(P, d->body, false, 1);
  while (P->walk.len > 0) {
    Walk w = P->walk.data[--P->walk.len];
    if (w.height > MAX_TREE_HEIGHT)
      fail_at(P, d->pos, fmt(P, "the definition of '%s' is too deeply nested (its expression "
                                "tree has more than %d levels)", d->name, MAX_TREE_HEIGHT));
    int h = w.height + 1;
    if (w.is_type) {
      const TypeAst *t = w.node;
      for (int k = 0; k < t->ndims; k++) walk_push(P, t->dims[k], false, h);
      walk_push(P, t->elem, true, h);
      walk_push(P, t->from, true, h);
      walk_push(P, t->to, true, h);
    } else {
      const Ast *a = w.node;
      walk_push(P, a->a, false, h);
      walk_push(P, a->b, false, h);
      walk_push(P, a->type, true, h);
      for (int k = 0; k < a->nargs; k++) walk_push(P, a->args[k], false, h);
      walk_binders(P, a->params, a->nparams, h);
    }
  }
}

/* ---- commands ---- */

/* def = ("def" | "abbrev") ident binder* (":" type)? ":=" expr */
static void parse_def(Parser *P, const char *doc) {
  Token *kw = tok(P);
  next(P);
  Token *name = tok(P);
  if (name->kind != TK_IDENT)
    fail(P, name, "expected a name after '%s', found %s", kw->text, desc(P, name));
  next(P);
  Decl *d = arena_alloc(P->c->arena, sizeof *d);
  d->name = name->text;
  d->pos = name->pos;
  d->doc = doc;
  d->file = P->f;
  Binders ps = {0};
  while (is_punct(tok(P), "(") || is_punct(tok(P), "{")) parse_binder_group(P, &ps, false);
  d->params = ps.data;
  d->nparams = ps.len;
  Token *t = tok(P);
  if (is_punct(t, "["))
    fail(P, t, "instance binders '[...]' are not part of the tilesmith subset");
  if (t->kind == TK_IDENT) {
    Token *u = peek(P, 1);
    if (u->kind == TK_IDENT || is_punct(u, "(") || is_punct(u, "{") || is_punct(u, ":") ||
        is_punct(u, ":="))
      fail(P, t, "the parameter '%s' of '%s' needs a type: write '(%s : T)'", t->text,
           d->name, t->text);
  }
  if (is_punct(t, ":")) {
    next(P);
    d->ret = parse_type(P);
    t = tok(P);
  }
  if (!is_punct(t, ":=")) {
    if (is_punct(t, "|"))
      fail(P, t, "definitions by pattern matching ('|') are not part of the tilesmith subset");
    if (d->ret) fail(P, t, "expected ':=' after the type of '%s'", d->name);
    if (d->nparams) fail(P, t, "expected ':=' after the parameters of '%s'", d->name);
    fail(P, t, "expected parameters, ':' or ':=' after the name '%s'", d->name);
  }
  next(P);
  need_expr(P, fmt(P, "the body of '%s' after ':='", d->name));
  d->body = parse_expr(P);
  check_height(P, d);
  vec_push(P->c->arena, &P->decls, d);
}

/* skipped-command = keyword token*   -- up to the next command that starts a
 * line at or left of column `col` */
static void skip_command(Parser *P, int col) {
  next(P);
  while (tok(P)->kind != TK_EOF) {
    const Token *t = tok(P), *doc = P->doc[P->i];
    if (doc && doc->bol && (int)doc->pos.col <= col) return;
    if (t->bol && (int)t->pos.col <= col && is_command_start(t)) return;
    next(P);
  }
}

/* attribute = "@[" ... "]"   (brackets balanced) */
static void skip_attribute(Parser *P) {
  Token *open = tok(P);
  next(P);
  int depth = 1;
  while (depth > 0) {
    Token *t = tok(P);
    if (t->kind == TK_EOF)
      fail_at(P, open->pos, "unterminated attribute list '@[' (opened here)");
    if (is_punct(t, "[") || is_punct(t, "@[")) depth++;
    if (is_punct(t, "]")) depth--;
    next(P);
  }
}

/* An optional name on the same line (after `section` and `end`). */
static const char *opt_name(Parser *P) {
  Token *t = tok(P);
  if (t->kind != TK_IDENT || t->bol) return NULL;
  next(P);
  return t->text;
}

/* "in" after `open` and `set_option` scopes them to the next command. */
static void opt_in(Parser *P) {
  if (is_kw(tok(P), "in")) next(P);
}

static void open_scope(Parser *P, const char *kind, const char *name, Pos pos) {
  Scope s = {kind, name, pos};
  vec_push(P->c->arena, &P->scopes, s);
}

/* end = "end" ident?   -- closes the innermost namespace, section or mutual */
static void parse_end(Parser *P) {
  Token *kw = tok(P);
  next(P);
  const char *name = opt_name(P);
  if (P->scopes.len == 0)
    fail_at(P, kw->pos, "'end' without a matching 'namespace', 'section' or 'mutual'");
  Scope *s = &P->scopes.data[P->scopes.len - 1];
  bool ok = (name && s->name && !strcmp(name, s->name)) || (!name && !s->name);
  if (!ok) {
    const char *want = s->name ? fmt(P, "end %s", s->name) : "end";
    fail_at(P, kw->pos,
            fmt(P, "'%s' does not close the innermost scope, '%s%s%s' opened at %u:%u; "
                   "expected '%s'",
                name ? fmt(P, "end %s", name) : "end", s->kind, s->name ? " " : "",
                s->name ? s->name : "", s->pos.line, s->pos.col, want));
  }
  P->scopes.len--;
}

/* What is left where a command should start. */
static TS_NORETURN void fail_command(Parser *P, const Token *t) {
  check_foreign(P, t);
  check_infix(P, t);
  if (is_punct(t, ")") || is_punct(t, "]") || is_punct(t, "}"))
    fail_at(P, t->pos, fmt(P, "unmatched '%s'", t->text));
  if (is_punct(t, ".") && !t->space_before)
    fail_at(P, t->pos, "projections and field access ('x.f') are not part of the tilesmith subset");
  if (t->bol && t->pos.col == 1 && starts_expr(t))
    fail_at(P, t->pos, fmt(P, "expected a declaration ('def ...'), found %s (indent the line "
                              "to continue the previous definition)", desc(P, t)));
  fail_at(P, t->pos, fmt(P, "expected a declaration ('def ...'), found %s", desc(P, t)));
}

/* command  = doc? modifier* ("def" | "abbrev") ...
 *          | "import" ident | "open" ident+ ("in")? | "namespace" ident
 *          | "section" ident? | "end" ident? | "mutual"
 *          | "set_option" ident (ident | nat | float | str) ("in")?
 *          | skipped-command
 * modifier = "@[" ... "]" | "private" | "protected" | "noncomputable"
 *          | "partial" | "unsafe" | "local" | "scoped" */
static void parse_command(Parser *P) {
  const Token *doctok = P->doc[P->i];
  const char *doc = doctok ? doctok->text : NULL;
  Token *first = tok(P);
  int col = (int)(doctok ? doctok->pos.col : first->pos.col);
  P->layout = col;
  bool mods = false;
  for (;;) {
    Token *t = tok(P);
    if (is_punct(t, "@[")) {
      skip_attribute(P);
      mods = true;
    } else if (t->kind == TK_KEYWORD && in_list(t->text, modifier_kws)) {
      next(P);
      mods = true;
    } else {
      break;
    }
  }
  Token *t = tok(P);
  bool is_import = is_kw(t, "import");
  if (is_import && P->seen_command)
    fail_at(P, t->pos, "'import' must come before all other commands");
  if (!is_import) P->seen_command = true;
  if (is_kw(t, "def") || is_kw(t, "abbrev")) {
    parse_def(P, doc);
    return;
  }
  if ((t->kind == TK_KEYWORD && in_list(t->text, skipped_kws)) || is_punct(t, "#")) {
    static const char *const type_kws[] = {"structure", "inductive", "class", NULL};
    if (t->kind == TK_KEYWORD && in_list(t->text, type_kws)) {
      const Token *name = peek(P, is_kw(peek(P, 1), "inductive") ? 2 : 1);
      if (name->kind == TK_IDENT) vec_push(P->c->arena, &P->type_names, name->text);
    }
    skip_command(P, col);
    return;
  }
  if (is_kw(t, "section")) {
    next(P);
    open_scope(P, "section", opt_name(P), t->pos);
    return;
  }
  if (mods)
    fail(P, t, "expected a declaration after the modifiers, found %s", desc(P, t));
  if (is_import) {
    next(P);
    if (tok(P)->kind != TK_IDENT)
      fail(P, tok(P), "expected a module name after 'import', found %s", desc(P, tok(P)));
    next(P);
  } else if (is_kw(t, "open")) {
    next(P);
    if (tok(P)->kind != TK_IDENT)
      fail(P, tok(P), "expected a namespace name after 'open', found %s", desc(P, tok(P)));
    /* `open A B`, `open A (x y)`, `open A hiding x`: the rest of the line */
    while (!tok(P)->bol && !is_kw(tok(P), "in") && !is_command_start(tok(P))) next(P);
    opt_in(P);
  } else if (is_kw(t, "namespace")) {
    next(P);
    Token *name = tok(P);
    if (name->kind != TK_IDENT)
      fail(P, name, "expected a name after 'namespace', found %s", desc(P, name));
    next(P);
    open_scope(P, "namespace", name->text, t->pos);
  } else if (is_kw(t, "mutual")) {
    next(P);
    open_scope(P, "mutual", NULL, t->pos);
  } else if (is_kw(t, "end")) {
    parse_end(P);
  } else if (is_kw(t, "set_option")) {
    next(P);
    Token *name = tok(P);
    if (name->kind != TK_IDENT)
      fail(P, name, "expected an option name after 'set_option', found %s", desc(P, name));
    next(P);
    Token *v = tok(P);
    if (v->kind != TK_IDENT && v->kind != TK_NAT && v->kind != TK_FLOAT && v->kind != TK_STR)
      fail(P, v, "expected a value after 'set_option %s', found %s", name->text, desc(P, v));
    next(P);
    opt_in(P);
  } else {
    fail_command(P, t);
  }
}

/* file = command* */
void parse_file(Ctx *c, const SrcFile *f, Program *prog) {
  Parser P = {0};
  P.c = c;
  P.f = f;
  TokenList tl = lex_file(c, f);
  P.t = arena_alloc(c->arena, sizeof(Token) * (size_t)tl.len);
  P.doc = arena_alloc(c->arena, sizeof(Token *) * (size_t)tl.len);
  const Token *pending = NULL;
  for (int k = 0; k < tl.len; k++) {
    if (tl.data[k].kind == TK_DOC) {
      pending = &tl.data[k];
      continue;
    }
    P.t[P.n] = tl.data[k];
    P.doc[P.n] = pending;
    P.n++;
    pending = NULL;
  }
  while (tok(&P)->kind != TK_EOF) parse_command(&P);
  /* unclosed namespaces and sections at the end of a file are fine */
  if (P.type_names.len > 0) {
    int nt = prog->ntype_names + P.type_names.len;
    const char **names = arena_alloc(c->arena, sizeof(char *) * (size_t)nt);
    for (int k = 0; k < prog->ntype_names; k++) names[k] = prog->type_names[k];
    for (int k = 0; k < P.type_names.len; k++) names[prog->ntype_names + k] = P.type_names.data[k];
    prog->type_names = names;
    prog->ntype_names = nt;
  }
  if (P.decls.len == 0) return;
  int total = prog->ndecls + P.decls.len;
  Decl **all = arena_alloc(c->arena, sizeof(Decl *) * (size_t)total);
  for (int k = 0; k < prog->ndecls; k++) all[k] = prog->decls[k];
  for (int k = 0; k < P.decls.len; k++) all[prog->ndecls + k] = P.decls.data[k];
  prog->decls = all;
  prog->ndecls = total;
}

Decl *program_find(const Program *prog, const char *name) {
  if (!prog || !name) return NULL;
  for (int k = prog->ndecls - 1; k >= 0; k--)
    if (prog->decls[k]->name && strcmp(prog->decls[k]->name, name) == 0)
      return prog->decls[k];
  return NULL;
}
