/*
 * misc.c: small shared helpers: UTF-8, edit distance (for "did you mean"),
 * hashing (FNV-1a), random numbers (xoshiro256** seeded by splitmix64, so a
 * seed gives the same inputs on every machine) and a streaming JSON writer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp) {
  if (n == 0) return 0;
  unsigned char c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  int len;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) len = 2, v = c & 0x1F, min = 0x80;
  else if ((c & 0xF0) == 0xE0) len = 3, v = c & 0x0F, min = 0x800;
  else if ((c & 0xF8) == 0xF0) len = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  if ((size_t)len > n) return 0;
  for (int i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

int utf8_encode(uint32_t cp, char out[4]) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Levenshtein distance over bytes, giving up (returning cap+1) past cap. */
int edit_distance(const char *a, const char *b, int cap) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return cap + 1;
  if ((int)(la > lb ? la - lb : lb - la) > cap) return cap + 1;
  int prev[65], cur[65];
  for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = (int)i;
    int best = cur[0];
    for (size_t j = 1; j <= lb; j++) {
      int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < d) d = prev[j] + 1;
      if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
      cur[j] = d;
      if (d < best) best = d;
    }
    if (best > cap) return cap + 1;
    memcpy(prev, cur, sizeof(int) * (lb + 1));
  }
  return prev[lb];
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ULL ^ seed;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
  return h;
}

/* ---- rng ---- */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void rng_seed(Rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(Rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double rng_uniform(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

double rng_normal(Rng *r) {
  /* Box-Muller; u1 in (0, 1] so the log is finite */
  double u1 = 1.0 - rng_uniform(r), u2 = rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int64_t rng_below(Rng *r, int64_t n) {
  if (n <= 1) return 0;
  uint64_t un = (uint64_t)n, lim = UINT64_MAX - UINT64_MAX % un, x;
  do x = rng_next(r);
  while (x >= lim);
  return (int64_t)(x % un);
}

/* The shortest %g spelling that reads back as exactly v (finite v). */
const char *fmt_double(char *buf, size_t n, double v) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, n, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  return buf;
}

/* ---- json ---- */
static void json_sep(Json *j) {
  if (j->depth > 0 && j->depth < 64) {
    if (!j->first[j->depth]) fputc(',', j->f);
    j->first[j->depth] = false;
  }
}

static void json_open(Json *j, char ch) {
  json_sep(j);
  fputc(ch, j->f);
  if (j->depth < 63) j->depth++;
  j->first[j->depth] = true;
}

void json_begin_obj(Json *j) { json_open(j, '{'); }
void json_begin_arr(Json *j) { json_open(j, '['); }
void json_end_obj(Json *j) {
  fputc('}', j->f);
  j->depth--;
  if (j->depth == 0) fputc('\n', j->f);
}
void json_end_arr(Json *j) {
  fputc(']', j->f);
  j->depth--;
}

static void json_raw_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", f);
    else if (*p == '\t') fputs("\\t", f);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

void json_key(Json *j, const char *k) {
  json_sep(j);
  json_raw_str(j->f, k);
  fputc(':', j->f);
  j->first[j->depth] = true; /* the value that follows needs no comma */
}

void json_str(Json *j, const char *s) {
  json_sep(j);
  json_raw_str(j->f, s);
}
void json_int(Json *j, int64_t v) {
  json_sep(j);
  fprintf(j->f, "%lld", (long long)v);
}
void json_num(Json *j, double v) {
  json_sep(j);
  if (isnan(v)) fputs("\"nan\"", j->f);
  else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", j->f);
  else {
    char buf[40];
    fputs(fmt_double(buf, sizeof buf, v), j->f);
  }
}
void json_bool(Json *j, bool v) {
  json_sep(j);
  fputs(v ? "true" : "false", j->f);
}
void json_null(Json *j) {
  json_sep(j);
  fputs("null", j->f);
}

void json_kstr(Json *j, const char *k, const char *v) {
  json_key(j, k);
  if (v) json_str(j, v);
  else json_null(j);
}

void json_kint(Json *j, const char *k, int64_t v) {
  json_key(j, k);
  json_int(j, v);
}

void json_knum(Json *j, const char *k, double v) {
  json_key(j, k);
  json_num(j, v);
}

static double clock_seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double ts_seconds(void) { return clock_seconds(CLOCK_MONOTONIC); }

double ts_cpu_seconds(void) { return clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

double idiv_euclid(double a, double b) {
  int64_t x = (int64_t)a, y = (int64_t)b;
  if (y == 0) return 0;
  int64_t q = x / y, r = x % y; /* C rounds toward zero */
  if (r < 0) q += y > 0 ? -1 : 1;
  return (double)q;
}
