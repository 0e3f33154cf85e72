/*
 * data.c: the training data a user points `tilesmith train` at.
 *
 * An array spec is PATH[:COLUMNS][/DIVISOR]: a .npy file (rows along its
 * first dimension), or a CSV of numbers (gzip-compressed when the name
 * ends in .gz; read through zlib), one row per line, a first line that is
 * not numbers taken as a header; COLUMNS picks CSV columns ("0-63", "64",
 * "0,2,5-7"), DIVISOR divides every value (pixel intensities 0..16 /16).
 * Two names stand for data Debian installs, so nothing is downloaded:
 *   @digits    the 1,797 handwritten digits (8x8 pixels, 0..16, and the
 *              label in column 64) that python3-sklearn ships as
 *              sklearn/datasets/data/digits.csv.gz;
 *   @licenses  (text) the license texts of /usr/share/common-licenses,
 *              concatenated in name order: base-files installs them on
 *              every Debian system, about 260 KB of English prose with
 *              legal vocabulary, enough for a byte-level model to learn
 *              words and punctuation.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <sys/stat.h>

#include "train.h"

#define DIGITS_PATH "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
#define LICENSES_DIR "/usr/share/common-licenses"

/* the whole file (inflated if gzip), NUL-terminated */
static char *slurp(const char *path, int64_t *len, char *err, size_t errlen) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s is a directory, not a file", path);
    return NULL;
  }
  gzFile f = gzopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno ? errno : ENOENT));
    return NULL;
  }
  size_t n = 0, cap = 1 << 16;
  char *buf = malloc(cap + 1);
  for (;;) {
    if (!buf) break;
    if (n == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (!b) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b, cap *= 2;
    }
    int r = gzread(f, buf + n, (unsigned)(cap - n));
    if (r < 0) {
      int e;
      const char *m = gzerror(f, &e); /* zlib's message names the file already */
      snprintf(err, errlen, "%s", m && *m ? m : path);
      free(buf);
      gzclose(f);
      return NULL;
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  gzclose(f);
  if (!buf) {
    snprintf(err, errlen, "%s: out of memory", path);
    return NULL;
  }
  buf[n] = 0;
  *len = (int64_t)n;
  return buf;
}

static bool ends_with(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && !strcmp(s + a - b, suf);
}

/* columns "0-63,70": mark[c] for c < max; false on a bad spec */
static bool parse_cols(const char *s, bool *mark, int max) {
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0) return false;
    if (*end == '-') {
      const char *q = end + 1;
      b = strtol(q, &end, 10);
      if (end == q || b < a) return false;
    }
    for (long c = a; c <= b && c < max; c++) mark[c] = true;
    if (b >= max) return false;
    if (*end == ',') end++;
    else if (*end) return false;
    s = end;
  }
  return true;
}

static Tensor *read_csv(const char *path, const char *cols, char *err, size_t errlen) {
  int64_t len;
  char *text = slurp(path, &len, err, errlen);
  if (!text) return NULL;
  enum { MAXC = 4096 };
  bool *mark = NULL;
  if (cols) {
    mark = calloc(MAXC, sizeof *mark);
    if (!parse_cols(cols, mark, MAXC)) {
      snprintf(err, errlen, "%s: columns '%s': expected A-B,C,... (below %d)", path, cols, MAXC);
      free(mark), free(text);
      return NULL;
    }
  }
  double *vals = NULL;
  int64_t nv = 0, capv = 0, rows = 0, width = -1, line = 0;
  char *p = text;
  while (*p) {
    char *eol = strchr(p, '\n');
    if (eol) *eol = 0;
    line++;
    int64_t c = 0, kept = 0;
    bool numeric = true;
    for (char *q = p; *q && *q != '\r';) {
      char *end;
      double v = strtod(q, &end);
      if (end == q) {
        numeric = false;
        break;
      }
      if (!mark || (c < MAXC && mark[c])) {
        if (nv == capv) {
          capv = capv ? 2 * capv : 4096;
          double *nvp = realloc(vals, sizeof(double) * (size_t)capv);
          if (!nvp) break;
          vals = nvp;
        }
        vals[nv++] = v, kept++;
      }
      c++;
      while (*end == ' ' || *end == '\t') end++;
      if (*end == ',') end++;
      q = end;
    }
    bool blank = !*p || *p == '\r';
    if (!numeric && rows == 0 && line == 1) { /* a header */
    } else if (!numeric && !blank) {
      snprintf(err, errlen, "%s:%lld: not a row of numbers", path, (long long)line);
      free(vals), free(mark), free(text);
      return NULL;
    } else if (!blank) {
      if (width >= 0 && kept != width) {
        snprintf(err, errlen, "%s:%lld: %lld values where the rows above have %lld", path, (long long)line,
                 (long long)kept, (long long)width);
        free(vals), free(mark), free(text);
        return NULL;
      }
      width = kept, rows++;
    }
    if (!eol) break;
    p = eol + 1;
  }
  free(mark), free(text);
  if (rows == 0 || width <= 0) {
    snprintf(err, errlen, "%s: no rows of numbers%s", path, cols ? " in those columns" : "");
    free(vals);
    return NULL;
  }
  Shape s = {.rank = width == 1 ? 1 : 2, .d = {{rows, NULL}, {width, NULL}}};
  Tensor *t = tensor_new(&s, EK_REAL);
  if (t) memcpy(t->data, vals, sizeof(double) * (size_t)(rows * width));
  free(vals);
  return t;
}

Tensor *train_read_array(const char *spec, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s", spec);
  double div = 1;
  char *slash = strrchr(path, '/');
  if (slash && slash[1] && strspn(slash + 1, "0123456789.eE+-") == strlen(slash + 1)) {
    div = strtod(slash + 1, NULL);
    *slash = 0;
    if (!(div > 0)) {
      snprintf(err, errlen, "%s: the divisor must be a positive number", spec);
      return NULL;
    }
  }
  char *colon = strrchr(path, ':');
  const char *cols = NULL;
  if (colon && colon[1] && strspn(colon + 1, "0123456789-,") == strlen(colon + 1)) cols = colon + 1, *colon = 0;
  const char *file = path;
  if (!strcmp(path, "@digits")) {
    file = DIGITS_PATH;
    FILE *f = fopen(file, "rb");
    if (!f) {
      snprintf(err, errlen, "@digits is the table Debian's python3-sklearn installs (%s): apt-get install python3-sklearn", file);
      return NULL;
    }
    fclose(f);
  }
  Tensor *t;
  if (ends_with(file, ".npy")) {
    if (cols) {
      snprintf(err, errlen, "%s: columns pick from a CSV, not a .npy", spec);
      return NULL;
    }
    t = npy_read(file, err, errlen);
  } else {
    t = read_csv(file, cols, err, errlen);
  }
  if (t && div != 1)
    for (int64_t i = 0; i < shape_numel(&t->shape); i++) t->data[i] /= div;
  return t;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

unsigned char *train_read_text(const char *spec, int64_t *len, char *err, size_t errlen) {
  if (strcmp(spec, "@licenses")) return (unsigned char *)slurp(spec, len, err, errlen);
  DIR *d = opendir(LICENSES_DIR);
  if (!d) {
    snprintf(err, errlen, "@licenses is %s (Debian's base-files): %s", LICENSES_DIR, strerror(errno));
    return NULL;
  }
  char *names[256];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 256)
    if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, by_name);
  unsigned char *all = NULL;
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    char path[4096], e2[256];
    int64_t l;
    snprintf(path, sizeof path, "%s/%s", LICENSES_DIR, names[i]);
    char *t = slurp(path, &l, e2, sizeof e2); /* a directory or a symlink loop: skipped */
    if (t) {
      unsigned char *b = realloc(all, (size_t)(total + l + 1));
      if (b) {
        all = b;
        memcpy(all + total, t, (size_t)l);
        total += l;
      }
      free(t);
    }
    free(names[i]);
  }
  if (!all) {
    snprintf(err, errlen, "@licenses: no files in %s", LICENSES_DIR);
    return NULL;
  }
  *len = total;
  return all;
}
