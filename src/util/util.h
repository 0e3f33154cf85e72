/*
 * util.h: the shared base of every stage.
 *
 * An Arena owns all memory of one compilation: nodes, strings and tables are
 * carved from it and freed together, so no stage frees anything by itself.
 * A Ctx is one compilation: its arena, its limits (steps, depth, nodes), the
 * stream diagnostics go to, and the jmp_buf an error unwinds to.  A user
 * error (bad syntax, a shape mismatch, an unknown name) is reported once with
 * `file:line:col`, the source line and a caret, then unwinds to the caller of
 * the stage; the program never exits from inside a stage, so the fuzzer and
 * the tests can run many compilations in one process.
 */
#ifndef TS_UTIL_H
#define TS_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TS_NORETURN _Noreturn
#if defined(__GNUC__)
#define TS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TS_PRINTF(f, a)
#endif

/* ---- arena ---- */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void arena_reset(Arena *a);                          /* forget every allocation, keep the memory */
void *arena_alloc(Arena *a, size_t size);          /* zeroed, 16-aligned */
void *arena_realloc(Arena *a, void *p, size_t old, size_t size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) TS_PRINTF(2, 3);
size_t arena_bytes(const Arena *a);                /* bytes obtained from malloc */

/* A growable array in an arena: `VEC(Node *) v = {0}; vec_push(a, &v, n);` */
#define VEC(T) struct { T *data; int len, cap; }
#define vec_push(arena, v, x)                                                  \
  do {                                                                         \
    if ((v)->len == (v)->cap) {                                                \
      int nc_ = (v)->cap ? (v)->cap * 2 : 8;                                   \
      (v)->data = arena_realloc((arena), (v)->data,                            \
                                sizeof(*(v)->data) * (size_t)(v)->cap,         \
                                sizeof(*(v)->data) * (size_t)nc_);             \
      (v)->cap = nc_;                                                          \
    }                                                                          \
    (v)->data[(v)->len++] = (x);                                               \
  } while (0)

/* ---- source files and positions ---- */
typedef struct SrcFile {
  const char *name;     /* as given on the command line */
  const char *text;     /* NUL-terminated copy of the contents */
  size_t len;
  bool is_prelude;      /* the embedded lean/Tilesmith.lean */
} SrcFile;

/* A source position: line and col are 1-based; col counts code points. */
typedef struct Pos {
  const SrcFile *file;
  uint32_t off;         /* byte offset of the first byte */
  uint32_t len;         /* length in bytes (for the caret run) */
  uint32_t line, col;
} Pos;

SrcFile *src_load(Arena *a, const char *path, char *err, size_t errlen);
SrcFile *src_from_string(Arena *a, const char *name, const char *text, size_t len);

/* ---- compilation context and diagnostics ---- */
typedef struct Ctx {
  Arena *arena;
  FILE *err;            /* diagnostics go here; NULL discards them */
  bool color;
  jmp_buf *unwind;      /* set by the stage's caller; ts_error longjmps here */
  int nerrors;
  /* expansion stack: where each inlined definition was called from; a ring
     holding the 64 innermost frames (frame k is frames[k % 64]) */
  struct { Pos call; const char *name; } frames[64];
  int depth;
  /* limits; 0 means the default */
  int64_t steps, max_steps;
  int max_depth;
  int max_nodes;
  int64_t max_elems;    /* largest tensor the interpreter will allocate */
} Ctx;

void ctx_init(Ctx *c, Arena *a, FILE *err);
/* Report an error at p and unwind.  The message is one line; `expected` style. */
TS_NORETURN void ts_error(Ctx *c, Pos p, const char *fmt, ...) TS_PRINTF(3, 4);
/* An error with no source position (bad file, bad option value). */
TS_NORETURN void ts_fatal(Ctx *c, const char *fmt, ...) TS_PRINTF(2, 3);
/* A note printed after an error, at p (no unwinding). */
void ts_note(Ctx *c, Pos p, const char *fmt, ...) TS_PRINTF(3, 4);
/* Print `file:line:col: kind: msg`, the line and a caret (shared by the above). */
void ts_diag_print(Ctx *c, Pos p, const char *kind, const char *fmt, va_list ap);
/* Count one elaboration or interpretation step; errors out past max_steps. */
void ts_step(Ctx *c, Pos p);

/* ---- strings ---- */
const char *str_intern(Arena *a, const char *s, size_t n); /* not deduplicated; plain copy */
int edit_distance(const char *a, const char *b, int cap);
/* Decode one UTF-8 code point at s (n bytes left); returns bytes used or 0 if invalid. */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
int utf8_encode(uint32_t cp, char out[4]);

/* The shortest %g spelling that reads back exactly (finite values). */
const char *fmt_double(char *buf, size_t n, double v);

/* ---- hashing ---- */
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);
static inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

/* ---- random numbers: xoshiro256** seeded by splitmix64 ---- */
typedef struct Rng { uint64_t s[4]; } Rng;
void rng_seed(Rng *r, uint64_t seed);
uint64_t rng_next(Rng *r);
double rng_uniform(Rng *r);                 /* [0, 1) */
double rng_normal(Rng *r);                  /* standard normal */
int64_t rng_below(Rng *r, int64_t n);       /* [0, n) */

/* ---- JSON writer (streaming, to a FILE) ---- */
typedef struct Json {
  FILE *f;
  int depth;
  bool first[64];
  bool pretty;
} Json;
/* Seconds on a monotonic clock (differences time a run). */
double ts_seconds(void);
/* the calling thread's CPU time, seconds: a limit on it does not move with the machine's load */
double ts_cpu_seconds(void);
/* Lean's Int division (Euclidean: the remainder is in [0, |b|); a / 0 = 0)
   of two integers held in doubles: idiv's meaning, for every evaluator. */
double idiv_euclid(double a, double b);

void json_begin_obj(Json *j);
void json_end_obj(Json *j);
void json_begin_arr(Json *j);
void json_end_arr(Json *j);
void json_key(Json *j, const char *k);
void json_str(Json *j, const char *s);
void json_int(Json *j, int64_t v);
void json_num(Json *j, double v);          /* NaN/inf written as strings */
void json_bool(Json *j, bool v);
void json_null(Json *j);
/* a key and its value in one call */
void json_kstr(Json *j, const char *k, const char *v);   /* NULL: null */
void json_kint(Json *j, const char *k, int64_t v);
void json_knum(Json *j, const char *k, double v);

#endif
