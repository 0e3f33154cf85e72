/*
 * diag.c: diagnostics, the compilation context and source files.
 *
 * Every user-facing error is `file:line:col: error: message`, followed by the
 * source line (tabs shown as one space, so the caret lines up) and a caret run
 * under the offending token, as chibicc and Clang print them.  While the
 * elaborator is inside inlined definitions, each error is followed by one
 * note per expansion frame, innermost first, pointing at the call site, so an
 * error inside the prelude's `softmax` also shows the user's line that called
 * it.  ts_error then longjmps to ctx->unwind; stages never exit the process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void ctx_init(Ctx *c, Arena *a, FILE *err) {
  memset(c, 0, sizeof *c);
  c->arena = a;
  c->err = err;
  c->max_steps = 50 * 1000 * 1000;
  c->max_depth = 1000;
  c->max_nodes = 2 * 1000 * 1000;
  c->max_elems = (int64_t)1 << 28;
}

/* Column of byte offset `off` on its line, in code points (1-based). */
static void print_source_line(Ctx *c, Pos p) {
  const char *t = p.file->text;
  size_t ls = p.off, le = p.off;
  if (ls > p.file->len) ls = le = p.file->len;
  while (ls > 0 && t[ls - 1] != '\n') ls--;
  while (le < p.file->len && t[le] != '\n' && t[le] != '\r') le++;
  int w = fprintf(c->err, "%5u | ", p.line) - 2;
  for (size_t i = ls; i < le; i++) fputc(t[i] == '\t' ? ' ' : t[i], c->err);
  fputc('\n', c->err);
  fprintf(c->err, "%*s| ", w, "");
  for (uint32_t i = 1; i < p.col; i++) fputc(' ', c->err);
  if (c->color) fputs("\033[1;32m", c->err);
  /* caret run: one per code point of the token on this line, at least one */
  size_t end = p.off + p.len;
  if (end > le) end = le;
  int n = 0;
  for (size_t i = p.off; i < end; i++)
    if (((unsigned char)t[i] & 0xC0) != 0x80) n++;
  if (n < 1) n = 1;
  fputc('^', c->err);
  for (int i = 1; i < n; i++) fputc('~', c->err);
  if (c->color) fputs("\033[0m", c->err);
  fputc('\n', c->err);
}

void ts_diag_print(Ctx *c, Pos p, const char *kind, const char *fmt, va_list ap) {
  if (!c->err) return;
  if (c->color) fputs("\033[1m", c->err);
  if (p.file) fprintf(c->err, "%s:%u:%u: ", p.file->name, p.line, p.col);
  else fputs("tilesmith: ", c->err);
  if (c->color) fputs(strcmp(kind, "error") == 0 ? "\033[1;31m" : "\033[1;36m", c->err);
  fprintf(c->err, "%s: ", kind);
  if (c->color) fputs("\033[0m\033[1m", c->err);
  vfprintf(c->err, fmt, ap);
  if (c->color) fputs("\033[0m", c->err);
  fputc('\n', c->err);
  if (p.file) print_source_line(c, p);
}

static TS_NORETURN void unwind(Ctx *c) {
  if (c->err) fflush(c->err);
  if (!c->unwind) {
    fprintf(stderr, "tilesmith: internal error: error raised with no handler\n");
    abort();
  }
  longjmp(*c->unwind, 1);
}

void ts_error(Ctx *c, Pos p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_diag_print(c, p, "error", fmt, ap);
  va_end(ap);
  c->nerrors++;
  /* the innermost expansion frames, then how many more there are */
  int shown = 0;
  for (int k = c->depth - 1; k >= 0 && k >= c->depth - 64 && shown < 6; k--, shown++)
    ts_note(c, c->frames[k % 64].call, "in the expansion of '%s' called here", c->frames[k % 64].name);
  if (c->depth > shown) ts_note(c, (Pos){0}, "(%d outer expansion frames not shown)", c->depth - shown);
  unwind(c);
}

void ts_fatal(Ctx *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_diag_print(c, (Pos){0}, "error", fmt, ap);
  va_end(ap);
  c->nerrors++;
  unwind(c);
}

void ts_note(Ctx *c, Pos p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_diag_print(c, p, "note", fmt, ap);
  va_end(ap);
}

void ts_step(Ctx *c, Pos p) {
  if (++c->steps > c->max_steps)
    ts_error(c, p, "the program takes more than %lld steps to elaborate or evaluate; is a "
                   "function applied to itself, or a fold too large?", (long long)c->max_steps);
}

SrcFile *src_from_string(Arena *a, const char *name, const char *text, size_t len) {
  SrcFile *f = arena_alloc(a, sizeof *f);
  f->name = arena_strdup(a, name);
  f->text = arena_strndup(a, text, len);
  f->len = len;
  return f;
}

SrcFile *src_load(Arena *a, const char *path, char *err, size_t errlen) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, fp)) > 0) {
    len += n;
    if (len == cap) {
      if (cap >= ((size_t)1 << 30)) {
        snprintf(err, errlen, "'%s' is larger than 1 GiB", path);
        free(buf);
        fclose(fp);
        return NULL;
      }
      char *nb = realloc(buf, cap *= 2);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  bool bad = ferror(fp) || !buf;
  fclose(fp);
  if (bad) {
    snprintf(err, errlen, "cannot read '%s'", path);
    free(buf);
    return NULL;
  }
  SrcFile *f = src_from_string(a, path, buf, len);
  free(buf);
  return f;
}
