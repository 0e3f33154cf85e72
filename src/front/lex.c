/*
 * lex.c: the lexer, from the bytes of a `.lean` file to a TokenList.
 *
 * The whole file is tokenized up front in one left-to-right pass; the parser
 * then walks the array.  The source is UTF-8: every code point is decoded
 * (utf8_decode) and validated, and an invalid byte or a NUL byte is an error
 * at that byte.  Columns count code points, so a caret under `kᵀ` lines up.
 * Each token records whether it is the first on its line (`bol`) and whether
 * white space or a comment precedes it (`space_before`): the parser needs the
 * first for Lean's layout rule and the second to tell indexing `W[l]` from
 * the application `f [1, 2]`.
 *
 * Identifiers follow Lean: a letter (ASCII, Greek except λ Π Σ, Latin-1 and
 * Latin Extended, the letter-like symbols ℓ ℕ ...) or `_`, then letters,
 * digits, `_ ' ! ?` and subscripts (W₁, xᵢ).  `ᵀ` is not a subscript: it is
 * the postfix transpose, so `kᵀ` is `k` then `ᵀ`.  A `.` directly followed by
 * a letter continues the name, so `Nat.fold` is one token.  Keywords are
 * identifiers found in a table; `λ` is spelled "fun".
 *
 * Punctuators are normalised to one spelling (`->` and `→` are "→", `<=` is
 * "≤", `↦` is "=>", ...).  A character the subset does not use (`∘`, `∀`,
 * `&`) still becomes a one-character TK_PUNCT token rather than an error
 * here: Lean-only commands the parser skips (theorems, notations) may contain
 * them, and the parser reports "unexpected character" when it meets one where
 * a term is wanted.  Only bytes no Lean file may contain (invalid UTF-8, NUL,
 * control characters) are lexer errors, together with malformed literals and
 * unterminated comments and strings.
 */
#include "front.h"

#include <stdlib.h>
#include <string.h>

typedef struct Lexer {
  Ctx *c;
  const SrcFile *f;
  const unsigned char *s;  /* the text */
  size_t n;                /* its length in bytes */
  size_t i;                /* current byte offset */
  uint32_t line, col;      /* position of byte i */
  bool bol, space;         /* for the next token */
  TokenList toks;
  Pos last_end;            /* just past the last token (where EOF points) */
} Lexer;

static Pos pos_here(Lexer *L, size_t len) {
  Pos p = {L->f, (uint32_t)L->i, (uint32_t)len, L->line, L->col};
  return p;
}

/* Decode the code point at byte i into *cp; returns its length in bytes.
   Invalid UTF-8, a NUL byte and control characters are errors here. */
static int peek_cp(Lexer *L, size_t i, uint32_t *cp) {
  if (i >= L->n) {
    *cp = 0;
    return 0;
  }
  unsigned char b = L->s[i];
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  int k = utf8_decode(L->s + i, L->n - i, cp);
  return k;  /* 0 when invalid: callers that consume it call check_cp */
}

/* Report the byte at L->i if it cannot appear in a source file. */
static void check_here(Lexer *L) {
  uint32_t cp;
  int k = peek_cp(L, L->i, &cp);
  if (k == 0)
    ts_error(L->c, pos_here(L, 1), "invalid UTF-8 byte 0x%02X in the source",
             L->s[L->i]);
  if (cp == 0) ts_error(L->c, pos_here(L, 1), "unexpected NUL byte in the source");
  if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F)
    ts_error(L->c, pos_here(L, 1), "unexpected control character U+%04X",
             (unsigned)cp);
}

/* Advance past one (valid) code point, keeping line and column. */
static void advance(Lexer *L) {
  check_here(L);
  uint32_t cp;
  int k = peek_cp(L, L->i, &cp);
  L->i += (size_t)k;
  if (cp == '\n') {
    L->line++;
    L->col = 1;
  } else {
    L->col++;
  }
}

static bool at(Lexer *L, const char *lit) {
  size_t m = strlen(lit);
  return L->i + m <= L->n && memcmp(L->s + L->i, lit, m) == 0;
}

/* ---- character classes ---- */

/* Lean's isLetterLike, plus Latin-1 and Latin Extended letters. */
static bool is_unicode_letter(uint32_t c) {
  if (c >= 0x3B1 && c <= 0x3C9) return c != 0x3BB;                 /* α-ω but λ */
  if (c >= 0x391 && c <= 0x3A9) return c != 0x3A0 && c != 0x3A3;  /* Α-Ω but Π Σ */
  if (c >= 0x3CA && c <= 0x3FB) return true;                      /* Coptic */
  if (c >= 0x1F00 && c <= 0x1FFE) return true;                    /* Greek ext. */
  if (c >= 0x2100 && c <= 0x214F) return true;                    /* ℓ ℕ ℝ ... */
  if (c >= 0x1D49C && c <= 0x1D59F) return true;                  /* 𝒜 𝔸 ... */
  if (c >= 0xC0 && c <= 0x24F) return c != 0xD7 && c != 0xF7;     /* é ß ... */
  return false;
}

static bool is_subscript(uint32_t c) {
  return (c >= 0x2080 && c <= 0x2089) || (c >= 0x2090 && c <= 0x209C) ||
         (c >= 0x1D62 && c <= 0x1D6A);
}

static bool is_ascii_letter(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

static bool is_id_first(uint32_t c) {
  return is_ascii_letter(c) || c == '_' || is_unicode_letter(c);
}
static bool is_id_rest(uint32_t c) {
  return is_id_first(c) || is_digit(c) || c == '\'' || c == '!' || c == '?' ||
         is_subscript(c);
}

/* ---- keywords ---- */

static const char *const keywords[] = {
    "def", "abbrev", "theorem", "lemma", "example", "opaque", "axiom",
    "instance", "class", "structure", "inductive", "notation", "infix",
    "infixl", "infixr", "prefix", "postfix", "macro", "macro_rules", "syntax",
    "attribute", "universe", "variable", "set_option", "import", "open",
    "namespace", "section", "end", "let", "fun", "in", "if", "then", "else",
    "where", "private", "protected", "noncomputable", "partial", "unsafe",
    "deriving", "mutual", "match", "with", "do", "by", "have", "show", "from",
    "calc", "return", "export", "elab", "elab_rules", "declare_syntax_cat",
    "local", "scoped", NULL,
};

static bool is_keyword(const char *s, size_t n) {
  for (int k = 0; keywords[k]; k++)
    if (strlen(keywords[k]) == n && memcmp(keywords[k], s, n) == 0) return true;
  return false;
}

/* ---- tokens ---- */

static Token *push(Lexer *L, TokKind kind, size_t start, uint32_t line,
                   uint32_t col, const char *text) {
  Token t = {0};
  t.kind = kind;
  t.pos.file = L->f;
  t.pos.off = (uint32_t)start;
  t.pos.len = (uint32_t)(L->i - start);
  t.pos.line = line;
  t.pos.col = col;
  t.text = text;
  t.bol = L->bol;
  t.space_before = L->space;
  L->bol = false;
  L->space = false;
  vec_push(L->c->arena, &L->toks, t);
  L->last_end = (Pos){L->f, (uint32_t)L->i, 0, L->line, L->col};
  return &L->toks.data[L->toks.len - 1];
}

/* Skip a block comment starting at "/-" (nesting allowed).  Returns the
   offset where its closing "-/" begins. */
static size_t skip_block_comment(Lexer *L, const char *what) {
  Pos open = pos_here(L, 2);
  advance(L);
  advance(L);
  int depth = 1;
  for (;;) {
    if (L->i >= L->n)
      ts_error(L->c, open, "unterminated %s (opened here)", what);
    if (at(L, "/-")) {
      advance(L);
      advance(L);
      depth++;
    } else if (at(L, "-/")) {
      size_t end = L->i;
      advance(L);
      advance(L);
      if (--depth == 0) return end;
    } else {
      advance(L);
    }
  }
}

static bool is_space_byte(unsigned char b) {
  return b == ' ' || b == '\t' || b == '\n' || b == '\r';
}

static void lex_doc(Lexer *L) {
  size_t start = L->i;
  uint32_t line = L->line, col = L->col;
  size_t body = start + 3;
  size_t end = skip_block_comment(L, "doc comment");
  if (end < body) end = body;  /* cannot happen: "/--" then "-/" */
  while (body < end && is_space_byte(L->s[body])) body++;
  while (end > body && is_space_byte(L->s[end - 1])) end--;
  const char *text = arena_strndup(L->c->arena, (const char *)L->s + body, end - body);
  push(L, TK_DOC, start, line, col, text);
  L->space = true;  /* the next token has a comment before it */
}

/* A number that runs into a letter (`12ab`): report it with the letters. */
static TS_NORETURN void bad_number_suffix(Lexer *L, size_t start, uint32_t line,
                                          uint32_t col) {
  size_t e = L->i;
  uint32_t cp;
  int k;
  while (e < L->n && (k = peek_cp(L, e, &cp)) > 0 && is_id_rest(cp) && e - start < 40)
    e += (size_t)k;
  Pos p = {L->f, (uint32_t)start, (uint32_t)(e - start), line, col};
  ts_error(L->c, p, "invalid number '%.*s': a number cannot be directly followed by a letter",
           (int)(e - start), (const char *)L->s + start);
}

static void lex_number(Lexer *L) {
  size_t start = L->i;
  uint32_t line = L->line, col = L->col;
  bool is_float = false;
  int base = 10;
  if (L->s[L->i] == '0' && L->i + 1 < L->n &&
      (L->s[L->i + 1] == 'x' || L->s[L->i + 1] == 'X' || L->s[L->i + 1] == 'b' ||
       L->s[L->i + 1] == 'B' || L->s[L->i + 1] == 'o' || L->s[L->i + 1] == 'O')) {
    char b = (char)(L->s[L->i + 1] | 0x20);
    base = b == 'x' ? 16 : b == 'b' ? 2 : 8;
    advance(L);
    advance(L);
  }
  size_t digits = L->i;
  int64_t v = 0;
  bool overflow = false;
  for (;;) {
    if (L->i >= L->n) break;
    unsigned char ch = L->s[L->i];
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (base == 16 && ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (base == 16 && ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    else break;
    if (d >= base) break;
    if (v > (INT64_MAX - d) / base) overflow = true;
    else v = v * base + d;
    advance(L);
  }
  if (L->i == digits) {
    Pos p = {L->f, (uint32_t)start, (uint32_t)(L->i - start), line, col};
    ts_error(L->c, p, "expected %s digits after '%.*s'",
             base == 16 ? "hexadecimal" : base == 2 ? "binary" : "octal",
             (int)(L->i - start), (const char *)L->s + start);
  }
  if (base == 10) {
    /* fraction: a '.' followed by a digit */
    if (L->i + 1 < L->n && L->s[L->i] == '.' && is_digit(L->s[L->i + 1])) {
      is_float = true;
      advance(L);
      while (L->i < L->n && is_digit(L->s[L->i])) advance(L);
    }
    /* exponent: e, an optional sign, digits */
    if (L->i < L->n && (L->s[L->i] == 'e' || L->s[L->i] == 'E')) {
      size_t j = L->i + 1;
      if (j < L->n && (L->s[j] == '+' || L->s[j] == '-')) j++;
      if (j < L->n && is_digit(L->s[j])) {
        is_float = true;
        while (L->i < j) advance(L);
        while (L->i < L->n && is_digit(L->s[L->i])) advance(L);
      }
    }
  }
  uint32_t cp;
  if (peek_cp(L, L->i, &cp) > 0 && (is_id_first(cp) || is_digit(cp)))
    bad_number_suffix(L, start, line, col);
  const char *text = arena_strndup(L->c->arena, (const char *)L->s + start, L->i - start);
  Pos p = {L->f, (uint32_t)start, (uint32_t)(L->i - start), line, col};
  if (is_float) {
    double d = strtod(text, NULL);
    if (d > 1.7976931348623157e308)
      ts_error(L->c, p, "number '%.40s' is too large for a Float", text);
    Token *t = push(L, TK_FLOAT, start, line, col, text);
    t->fnum = d;
  } else {
    if (overflow)
      ts_error(L->c, p, "integer literal '%.40s' is too large (the largest is 9223372036854775807)",
               text);
    Token *t = push(L, TK_NAT, start, line, col, text);
    t->nat = v;
  }
}

static void lex_string(Lexer *L) {
  size_t start = L->i;
  uint32_t line = L->line, col = L->col;
  Pos open = pos_here(L, 1);
  advance(L);
  VEC(char) buf = {0};
  for (;;) {
    if (L->i >= L->n) ts_error(L->c, open, "unterminated string (opened here)");
    unsigned char ch = L->s[L->i];
    if (ch == '"') {
      advance(L);
      break;
    }
    if (ch == '\\') {
      Pos esc = pos_here(L, 2);
      advance(L);
      if (L->i >= L->n) ts_error(L->c, open, "unterminated string (opened here)");
      unsigned char e = L->s[L->i];
      char out;
      switch (e) {
      case '\\': out = '\\'; break;
      case '"': out = '"'; break;
      case '\'': out = '\''; break;
      case 'n': out = '\n'; break;
      case 't': out = '\t'; break;
      case 'r': out = '\r'; break;
      default:
        check_here(L);
        ts_error(L->c, esc,
                 "unknown escape sequence in a string (known: \\\\ \\\" \\' \\n \\t \\r)");
      }
      vec_push(L->c->arena, &buf, out);
      advance(L);
      continue;
    }
    size_t from = L->i;
    advance(L);
    for (size_t j = from; j < L->i; j++) vec_push(L->c->arena, &buf, (char)L->s[j]);
  }
  const char *text = arena_strndup(L->c->arena, buf.data ? buf.data : "", (size_t)buf.len);
  push(L, TK_STR, start, line, col, text);
}

static void lex_ident(Lexer *L) {
  size_t start = L->i;
  uint32_t line = L->line, col = L->col;
  for (;;) {
    uint32_t cp;
    int k = peek_cp(L, L->i, &cp);
    if (k > 0 && is_id_rest(cp)) {
      advance(L);
      continue;
    }
    /* `Nat.fold`: a dot directly followed by a letter continues the name */
    if (k == 1 && cp == '.') {
      uint32_t nx;
      if (peek_cp(L, L->i + 1, &nx) > 0 && is_id_first(nx)) {
        advance(L);
        continue;
      }
    }
    break;
  }
  size_t len = L->i - start;
  const char *src = (const char *)L->s + start;
  if (is_keyword(src, len)) {
    push(L, TK_KEYWORD, start, line, col, arena_strndup(L->c->arena, src, len));
  } else {
    push(L, TK_IDENT, start, line, col, arena_strndup(L->c->arena, src, len));
  }
}

/* Punctuators: the longest spelling first; `norm` is the token's text. */
static const struct { const char *spell, *norm; } puncts[] = {
    {":=", ":="}, {"=>", "=>"}, {"->", "→"}, {"<=", "≤"}, {">=", "≥"},
    {"!=", "≠"},  {"==", "=="}, {"<|", "<|"}, {"|>", "|>"}, {"@[", "@["},
    {"↦", "=>"},  {"→", "→"},   {"≤", "≤"},   {"≥", "≥"},   {"≠", "≠"},
    {"⬝", "⬝"},   {"ᵀ", "ᵀ"},   {"×", "×"},   {"λ", "fun"},
    {"(", "("},   {")", ")"},   {"[", "["},   {"]", "]"},   {"{", "{"},
    {"}", "}"},   {",", ","},   {":", ":"},   {";", ";"},   {".", "."},
    {"+", "+"},   {"-", "-"},   {"*", "*"},   {"/", "/"},   {"^", "^"},
    {"<", "<"},   {">", ">"},   {"@", "@"},   {"#", "#"},   {"%", "%"},
    {"=", "="},   {"!", "!"},   {"|", "|"},   {NULL, NULL},
};

static void lex_punct(Lexer *L) {
  size_t start = L->i;
  uint32_t line = L->line, col = L->col;
  for (int k = 0; puncts[k].spell; k++) {
    if (!at(L, puncts[k].spell)) continue;
    size_t m = strlen(puncts[k].spell);
    while (L->i < start + m) advance(L);
    push(L, strcmp(puncts[k].norm, "fun") == 0 ? TK_KEYWORD : TK_PUNCT, start,
         line, col, puncts[k].norm);
    return;
  }
  /* Any other character: a one-character token the parser will reject
     unless it sits inside a skipped Lean-only command. */
  advance(L);
  push(L, TK_PUNCT, start, line, col,
       arena_strndup(L->c->arena, (const char *)L->s + start, L->i - start));
}

TokenList lex_file(Ctx *c, const SrcFile *f) {
  Lexer L = {0};
  L.c = c;
  L.f = f;
  L.s = (const unsigned char *)(f->text ? f->text : "");
  L.n = f->text ? f->len : 0;
  L.line = 1;
  L.col = 1;
  L.bol = true;
  L.last_end = (Pos){f, 0, 0, 1, 1};
  if (L.n > 0x7FFFFFFFu) {
    Pos p = {f, 0, 0, 1, 1};
    ts_error(c, p, "source file too large (more than 2 GiB)");
  }
  /* a byte-order mark at the start is not part of the text */
  if (at(&L, "\xEF\xBB\xBF")) L.i = 3;
  while (L.i < L.n) {
    unsigned char b = L.s[L.i];
    if (b == ' ' || b == '\t' || b == '\r') {
      advance(&L);
      L.space = true;
      continue;
    }
    if (b == '\n') {
      advance(&L);
      L.space = true;
      L.bol = true;
      continue;
    }
    if (at(&L, "--")) {
      while (L.i < L.n && L.s[L.i] != '\n') advance(&L);
      L.space = true;
      continue;
    }
    if (at(&L, "/--") && !at(&L, "/--/")) {
      lex_doc(&L);
      continue;
    }
    if (at(&L, "/-")) {
      skip_block_comment(&L, "block comment");
      L.space = true;
      continue;
    }
    if (b == '"') {
      lex_string(&L);
      continue;
    }
    if (is_digit(b)) {
      lex_number(&L);
      continue;
    }
    check_here(&L);
    uint32_t cp;
    peek_cp(&L, L.i, &cp);
    if (is_id_first(cp)) {
      lex_ident(&L);
      continue;
    }
    lex_punct(&L);
  }
  Token eof = {0};
  eof.kind = TK_EOF;
  eof.pos = L.last_end;
  eof.text = "";
  eof.bol = true;
  eof.space_before = true;
  vec_push(c->arena, &L.toks, eof);
  return L.toks;
}
