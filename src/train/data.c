/*
 * data.c: the training data a user points `tilesmith train` at.
 *
 * An array spec is PATH[:COLUMNS][/DIVISOR]: a .npy file (rows along its
 * first dimension), or a CSV of numbers (gzip-compressed when the name
 * ends in .gz; read through zlib), one row per line, a first line that is
 * not numbers taken as a header (after a UTF-8 byte-order mark, if any;
 * fields may be quoted, a line may end in a separator, lines of spaces are
 * blank);
 * COLUMNS picks CSV columns in the order given ("0-63", "64", "0,2,5-7",
 * "3,1"), DIVISOR divides every value (pixel intensities 0..16 /16).
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
#include <math.h>
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

/* columns "0-63,70" in the order given (a column may repeat, as numpy's
   usecols takes them), each below max, at most max of them: their number,
   or -1 on a bad spec */
static int parse_cols(const char *s, int *pick, int max) {
  int n = 0;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0 || a >= max) return -1;
    if (*end == '-') {
      const char *q = end + 1;
      b = strtol(q, &end, 10);
      if (end == q || b < a || b >= max) return -1;
    }
    for (long c = a; c <= b; c++) {
      if (n == max) return -1;
      pick[n++] = (int)c;
    }
    if (*end == ',') end++;
    else if (*end) return -1;
    s = end;
  }
  return n;
}

static Tensor *read_csv(const char *path, const char *cols, char *err, size_t errlen) {
  int64_t len;
  char *text = slurp(path, &len, err, errlen);
  if (!text) return NULL;
  enum { MAXC = 4096 };
  int *pick = NULL, npick = 0;
  if (cols) {
    pick = malloc(sizeof *pick * MAXC);
    npick = parse_cols(cols, pick, MAXC);
    if (npick <= 0) {
      snprintf(err, errlen, "%s: columns '%s': expected A-B,C,... (at most %d columns)", path, cols, MAXC);
      free(pick), free(text);
      return NULL;
    }
  }
  double *vals = NULL, *row = malloc(sizeof(double) * MAXC);
  int64_t nv = 0, capv = 0, rows = 0, width = -1, line = 0;
  char *p = text;
  if (!strncmp(p, "\xEF\xBB\xBF", 3)) p += 3; /* a UTF-8 byte-order mark (Excel's "CSV UTF-8") */
  bool bad = false; /* err says why */
  while (*p && !bad) {
    char *eol = strchr(p, '\n');
    if (eol) *eol = 0;
    line++;
    int64_t c = 0;
    bool numeric = true;
    const char *what = NULL; /* the field that is not a number */
    for (char *q = p; *q && *q != '\r';) {
      while (*q == ' ' || *q == '\t') q++;
      if (!*q || *q == '\r') break; /* a separator at the end of the line */
      bool quoted = *q == '"'; /* "0.25": spreadsheet exports quote every field */
      char *end;
      double v = strtod(q + quoted, &end);
      if (end == q + quoted || (quoted && *end++ != '"')) {
        numeric = false, what = q;
        break;
      }
      if (c < MAXC) row[c] = v;
      c++;
      while (*end == ' ' || *end == '\t') end++;
      if (*end == ',') end++;
      else if (*end && *end != '\r') {
        numeric = false, what = q;
        break;
      }
      q = end;
    }
    bool blank = !p[strspn(p, " \t\r")]; /* empty or only spaces */
    if (!numeric && rows == 0 && line == 1) { /* a header */
    } else if (!numeric && !blank) {
      snprintf(err, errlen, "%s:%lld: field %lld, '%.*s', is not a number", path, (long long)line, (long long)c + 1,
               (int)strcspn(what, ",\r"), what);
      bad = true;
    } else if (!blank) {
      if (width >= 0 && c != width) {
        snprintf(err, errlen, "%s:%lld: %lld values where the rows above have %lld", path, (long long)line,
                 (long long)c, (long long)width);
        bad = true;
      } else if (c > MAXC) {
        snprintf(err, errlen, "%s:%lld: %lld values, more than the %d columns read", path, (long long)line,
                 (long long)c, MAXC);
        bad = true;
      }
      int64_t k = pick ? npick : c;
      for (int i = 0; i < npick && !bad; i++)
        if (pick[i] >= c) {
          snprintf(err, errlen, "%s:%lld: column %d is picked, but the row has %lld values (columns 0-%lld)", path,
                   (long long)line, pick[i], (long long)c, (long long)c - 1);
          bad = true;
        }
      if (!bad && nv + k > capv) {
        while (nv + k > capv) capv = capv ? 2 * capv : 4096;
        double *nvp = realloc(vals, sizeof(double) * (size_t)capv);
        if (!nvp) {
          snprintf(err, errlen, "%s: out of memory", path);
          bad = true;
        } else {
          vals = nvp;
        }
      }
      for (int64_t i = 0; i < k && !bad; i++) vals[nv++] = row[pick ? pick[i] : i];
      width = c, rows++;
    }
    if (!eol) break;
    p = eol + 1;
  }
  free(pick), free(row), free(text);
  if (bad) {
    free(vals);
    return NULL;
  }
  int64_t cols_out = cols ? npick : width;
  if (rows == 0 || cols_out <= 0) {
    snprintf(err, errlen, "%s: no rows of numbers", path);
    free(vals);
    return NULL;
  }
  Shape sh = {.rank = cols_out == 1 ? 1 : 2, .d = {{rows, NULL}, {cols_out, NULL}}};
  Tensor *t = tensor_new(&sh, EK_REAL);
  if (t) memcpy(t->data, vals, sizeof(double) * (size_t)(rows * cols_out));
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
    if (!(div > 0) || !isfinite(div)) {
      snprintf(err, errlen, "%s: the divisor must be a positive, finite number", spec);
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
