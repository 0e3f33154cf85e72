/*
 * npy.c: reading and writing NumPy .npy files.
 *
 * Design.  A .npy file is a 6-byte magic "\x93NUMPY", a version (1.0: a
 * 2-byte header length; 2.0 and 3.0: a 4-byte one), an ASCII (3.0: UTF-8)
 * header holding a Python dict literal such as
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * and then the raw elements.  The header is untrusted input, so it is parsed
 * by a small recursive-descent parser over a bounded buffer (Hdr) that
 * accepts exactly a dict of the three keys, with single- or double-quoted
 * strings, True/False and a tuple of non-negative integers; anything else is
 * an error message, never a crash.  The element count is checked for
 * overflow and against the bytes the file actually holds before anything is
 * allocated, and the data are converted to doubles in bounded chunks.
 *
 * Reading accepts float16/32/64, signed and unsigned integers of 1, 2, 4 and
 * 8 bytes, and bool, in either byte order (big-endian data are swapped).
 * Fortran order and structured or object dtypes are rejected with a message.
 * Writing always produces version 1.0, '<f8', C order: what np.load expects.
 * Errors are returned as "path: message" in err; nothing unwinds.
 */
#include "interp.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NPY_MAX_HEADER (1u << 20)
#define NPY_CHUNK 65536

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static bool fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    TS_PRINTF(4, 5);
static bool fail(char *err, size_t errlen, const char *path, const char *fmt, ...) {
  if (!err || errlen == 0) return false;
  int k = snprintf(err, errlen, "%s: ", path);
  if (k < 0 || (size_t)k >= errlen) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
  va_end(ap);
  return false;
}

static bool host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* ---- the header dict ---- */

typedef struct Hdr {
  const char *p, *end;
  char descr[32];
  bool fortran;
  Shape shape;
  unsigned seen;          /* bit 0 descr, 1 fortran_order, 2 shape */
  char msg[160];          /* the first error */
} Hdr;

static bool hdr_fail(Hdr *h, const char *fmt, ...) TS_PRINTF(2, 3);
static bool hdr_fail(Hdr *h, const char *fmt, ...) {
  if (h->msg[0]) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(h->msg, sizeof h->msg, fmt, ap);
  va_end(ap);
  return false;
}

static void hdr_ws(Hdr *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static bool hdr_eat(Hdr *h, char c) {
  hdr_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* string: '...' or "..." without escapes */
static bool hdr_string(Hdr *h, char *out, size_t cap) {
  hdr_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return hdr_fail(h, "expected a quoted string in the header");
  char q = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\' || *h->p == '\n' || n + 1 >= cap)
      return hdr_fail(h, "unsupported or overlong string in the header");
    out[n++] = *h->p++;
  }
  if (h->p >= h->end) return hdr_fail(h, "unterminated string in the header");
  h->p++;
  out[n] = '\0';
  return true;
}

static bool hdr_word(Hdr *h, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0) return false;
  h->p += n;
  return true;
}

static bool hdr_bool(Hdr *h, bool *v) {
  hdr_ws(h);
  if (hdr_word(h, "True")) *v = true;
  else if (hdr_word(h, "False")) *v = false;
  else return hdr_fail(h, "expected True or False for 'fortran_order'");
  return true;
}

/* a non-negative decimal integer, optionally with Python 2's 'L' */
static bool hdr_int(Hdr *h, int64_t *v) {
  hdr_ws(h);
  if (h->p >= h->end || *h->p < '0' || *h->p > '9')
    return hdr_fail(h, "expected a non-negative integer in 'shape'");
  int64_t x = 0;
  while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
    int dgt = *h->p++ - '0';
    if (x > (INT64_MAX - dgt) / 10) return hdr_fail(h, "dimension too large in 'shape'");
    x = x * 10 + dgt;
  }
  if (h->p < h->end && *h->p == 'L') h->p++;
  *v = x;
  return true;
}

/* (), (n,), (a, b), (a, b,) */
static bool hdr_tuple(Hdr *h, Shape *s) {
  memset(s, 0, sizeof *s);
  if (!hdr_eat(h, '(')) return hdr_fail(h, "expected a tuple for 'shape'");
  while (!hdr_eat(h, ')')) {
    if (s->rank == TS_MAX_RANK)
      return hdr_fail(h, "arrays of rank above %d are not supported", TS_MAX_RANK);
    if (!hdr_int(h, &s->d[s->rank].n)) return false;
    s->rank++;
    if (!hdr_eat(h, ',')) {
      if (hdr_eat(h, ')')) break;
      return hdr_fail(h, "expected ',' or ')' in 'shape'");
    }
  }
  return true;
}

static bool hdr_entry(Hdr *h) {
  char key[32];
  if (!hdr_string(h, key, sizeof key)) return false;
  if (!hdr_eat(h, ':')) return hdr_fail(h, "expected ':' after '%s'", key);
  unsigned bit = strcmp(key, "descr") == 0           ? 1u
                 : strcmp(key, "fortran_order") == 0 ? 2u
                 : strcmp(key, "shape") == 0         ? 4u
                                                     : 0u;
  if (!bit) return hdr_fail(h, "unexpected key '%s' in the header", key);
  if (h->seen & bit) return hdr_fail(h, "key '%s' appears twice in the header", key);
  h->seen |= bit;
  hdr_ws(h);
  if (bit == 1 && h->p < h->end && *h->p == '[')
    return hdr_fail(h, "structured dtypes are not supported");
  return bit == 1   ? hdr_string(h, h->descr, sizeof h->descr)
         : bit == 2 ? hdr_bool(h, &h->fortran)
                    : hdr_tuple(h, &h->shape);
}

static bool hdr_parse(Hdr *h) {
  if (!hdr_eat(h, '{')) return hdr_fail(h, "the header is not a dict");
  while (!hdr_eat(h, '}')) {
    if (!hdr_entry(h)) return false;
    if (!hdr_eat(h, ',')) {
      if (hdr_eat(h, '}')) break;
      return hdr_fail(h, "expected ',' or '}' in the header");
    }
  }
  hdr_ws(h);
  while (h->p < h->end && *h->p == '\0') h->p++; /* tolerate NUL padding */
  if (h->p != h->end) return hdr_fail(h, "unexpected text after the header dict");
  if (h->seen != 7) return hdr_fail(h, "the header lacks 'descr', 'fortran_order' or 'shape'");
  return true;
}

/* ---- dtypes ---- */

typedef struct Dtype {
  char type;    /* 'f', 'i', 'u', 'b' */
  int size;     /* bytes */
  bool swap;    /* data byte order differs from the host's */
} Dtype;

static bool dtype_parse(const char *s, Dtype *dt, char *msg, size_t cap) {
  char order = '=';
  const char *p = s;
  if (*p == '<' || *p == '>' || *p == '|' || *p == '=') order = *p++;
  dt->type = *p ? *p++ : '\0';
  char *end;
  errno = 0;
  long size = strtol(p, &end, 10);
  bool sized = end != p && *end == '\0' && errno == 0 && *p >= '0' && *p <= '9';
  dt->size = sized ? (int)size : 0;
  bool ok = sized && ((dt->type == 'f' && (size == 2 || size == 4 || size == 8)) ||
                      ((dt->type == 'i' || dt->type == 'u') &&
                       (size == 1 || size == 2 || size == 4 || size == 8)) ||
                      (dt->type == 'b' && size == 1));
  if (!ok) {
    snprintf(msg, cap, "unsupported dtype '%s' (supported: float16/32/64, int and uint of "
                       "1/2/4/8 bytes, bool)", s);
    return false;
  }
  bool little = order == '<' || ((order == '=' || order == '|') && host_little_endian());
  dt->swap = dt->size > 1 && little != host_little_endian();
  return true;
}

static ElemKind dtype_kind(const Dtype *dt) {
  return dt->type == 'f' ? EK_REAL : dt->type == 'b' ? EK_BOOL : EK_INT;
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0    ? ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static double load_elem(const unsigned char *src, const Dtype *dt) {
  unsigned char b[8];
  for (int i = 0; i < dt->size; i++) b[i] = src[dt->swap ? dt->size - 1 - i : i];
  union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
          uint64_t u64; int64_t i64; float f; double d; } v;
  memcpy(&v, b, (size_t)dt->size);
  switch (dt->type) {
  case 'b': return v.u8 != 0;
  case 'f': return dt->size == 2 ? half_to_double(v.u16) : dt->size == 4 ? v.f : v.d;
  case 'i':
    return dt->size == 1 ? v.i8 : dt->size == 2 ? v.i16 : dt->size == 4 ? v.i32 : (double)v.i64;
  case 'u':
    return dt->size == 1 ? v.u8 : dt->size == 2 ? v.u16 : dt->size == 4 ? v.u32 : (double)v.u64;
  default: return NAN;
  }
}

/* ---- reading ---- */

/* Magic, version and header text; *hdr is malloc'd on success. */
static bool read_header(FILE *f, const char *path, char **hdr, size_t *hlen, char *err,
                        size_t errlen) {
  unsigned char pre[12];
  size_t got = fread(pre, 1, 8, f);
  if (got != 8 && ferror(f)) return fail(err, errlen, path, "cannot read: %s", strerror(errno));
  if (got != 8 || memcmp(pre, npy_magic, 6) != 0)
    return fail(err, errlen, path, "not a .npy file (bad magic)");
  int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    return fail(err, errlen, path, "unsupported .npy format version %d.%d", major, minor);
  size_t nlen = major == 1 ? 2 : 4;
  if (fread(pre + 8, 1, nlen, f) != nlen)
    return fail(err, errlen, path, "truncated .npy header");
  size_t n = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (nlen == 4) n |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
  if (n > NPY_MAX_HEADER)
    return fail(err, errlen, path, "the .npy header claims %zu bytes, more than %u", n,
                NPY_MAX_HEADER);
  char *text = malloc(n ? n : 1);
  if (!text) return fail(err, errlen, path, "out of memory reading the header");
  if (fread(text, 1, n, f) != n) {
    free(text);
    return fail(err, errlen, path, "truncated .npy header");
  }
  *hdr = text;
  *hlen = n;
  return true;
}

/* Parse the header into shape and dtype. */
static bool decode_header(const char *text, size_t n, const char *path, Shape *s, Dtype *dt,
                          char *err, size_t errlen) {
  Hdr h;
  memset(&h, 0, sizeof h);
  h.p = text;
  h.end = text + n;
  if (!hdr_parse(&h)) return fail(err, errlen, path, "malformed .npy header: %s", h.msg);
  if (h.fortran)
    return fail(err, errlen, path, "Fortran-order arrays are not supported; save with "
                                   "np.ascontiguousarray(a)");
  char msg[160];
  if (!dtype_parse(h.descr, dt, msg, sizeof msg)) return fail(err, errlen, path, "%s", msg);
  *s = h.shape;
  return true;
}

/* Bytes left in f from the current position, or -1 when unknown (a pipe). */
static int64_t bytes_left(FILE *f) {
  struct stat st;
  long pos = ftell(f);
  if (pos < 0 || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  return (int64_t)st.st_size - pos;
}

static bool read_data(FILE *f, const char *path, Tensor *t, const Dtype *dt, char *err,
                      size_t errlen) {
  int64_t total = shape_numel(&t->shape);
  unsigned char *buf = malloc((size_t)NPY_CHUNK * (size_t)dt->size);
  if (!buf) return fail(err, errlen, path, "out of memory");
  for (int64_t done = 0; done < total;) {
    size_t k = (size_t)(total - done < NPY_CHUNK ? total - done : NPY_CHUNK);
    if (fread(buf, (size_t)dt->size, k, f) != k) {
      free(buf);
      return fail(err, errlen, path, "the file ends before its %lld elements",
                  (long long)total);
    }
    for (size_t i = 0; i < k; i++) t->data[done + (int64_t)i] = load_elem(buf + i * (size_t)dt->size, dt);
    done += (int64_t)k;
  }
  free(buf);
  return true;
}

/* Check the element count and that the file holds that many bytes. */
static bool check_size(FILE *f, const char *path, const Shape *s, const Dtype *dt, char *err,
                       size_t errlen) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->d[i].n;
    if (d != 0 && n > INT64_MAX / 8 / d) return fail(err, errlen, path, "the array is too large");
    n *= d;
  }
  int64_t left = bytes_left(f);
  if (left >= 0 && left < n * dt->size)
    return fail(err, errlen, path, "the file holds %lld data bytes, but shape and dtype need %lld",
                (long long)left, (long long)(n * dt->size));
  return true;
}

static Tensor *npy_read_file(FILE *f, const char *path, char *err, size_t errlen) {
  char *text = NULL;
  size_t n = 0;
  Shape s = {0};
  Dtype dt = {0};
  if (!read_header(f, path, &text, &n, err, errlen)) return NULL;
  bool ok = decode_header(text, n, path, &s, &dt, err, errlen);
  free(text);
  if (!ok || !check_size(f, path, &s, &dt, err, errlen)) return NULL;
  Tensor *t = tensor_new(&s, dtype_kind(&dt));
  if (!t) {
    fail(err, errlen, path, "out of memory for %lld elements", (long long)shape_numel(&s));
    return NULL;
  }
  if (!read_data(f, path, t, &dt, err, errlen)) {
    tensor_free(t);
    return NULL;
  }
  return t;
}

Tensor *npy_read(const char *path, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail(err, errlen, path, "cannot open: %s", strerror(errno));
    return NULL;
  }
  Tensor *t = npy_read_file(f, path, err, errlen);
  fclose(f);
  return t;
}

/* ---- writing ---- */

/* The header text, padded with spaces and a newline so that the data start
   at a multiple of 64 bytes; returns its length. */
static size_t build_header(const Shape *s, char *h, size_t cap) {
  size_t k = (size_t)snprintf(h, cap, "{'descr': '<f8', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < s->rank; i++)
    k += (size_t)snprintf(h + k, cap - k, "%s%lld", i ? ", " : "", (long long)s->d[i].n);
  k += (size_t)snprintf(h + k, cap - k, "%s), }", s->rank == 1 ? "," : "");
  while ((10 + k + 1) % 64 != 0) h[k++] = ' ';
  h[k++] = '\n';
  return k;
}

static bool write_data(FILE *f, const Tensor *t) {
  int64_t total = shape_numel(&t->shape);
  if (host_little_endian())
    return fwrite(t->data, sizeof(double), (size_t)total, f) == (size_t)total;
  for (int64_t i = 0; i < total; i++) {
    unsigned char b[8], r[8];
    memcpy(b, &t->data[i], 8);
    for (int j = 0; j < 8; j++) r[j] = b[7 - j];
    if (fwrite(r, 1, 8, f) != 8) return false;
  }
  return true;
}

bool npy_write(const char *path, const Tensor *t, char *err, size_t errlen) {
  if (!t || !t->data || t->shape.rank < 0 || t->shape.rank > TS_MAX_RANK)
    return fail(err, errlen, path, "no tensor to write");
  char h[512];
  size_t n = build_header(&t->shape, h, sizeof h);
  unsigned char pre[10];
  memcpy(pre, npy_magic, 6);
  pre[6] = 1;
  pre[7] = 0;
  pre[8] = (unsigned char)(n & 0xff);
  pre[9] = (unsigned char)(n >> 8);
  FILE *f = fopen(path, "wb");
  if (!f) return fail(err, errlen, path, "cannot open for writing: %s", strerror(errno));
  bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(h, 1, n, f) == n && write_data(f, t);
  ok = (fclose(f) == 0) && ok;
  if (!ok) return fail(err, errlen, path, "write failed: %s", strerror(errno));
  return true;
}
