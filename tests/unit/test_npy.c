/* test_npy.c: .npy reading and writing.  Round trips through npy_write and
   npy_read; files crafted byte by byte (every supported dtype, both byte
   orders, versions 1.0/2.0/3.0, scalar and empty shapes); files written by
   NumPy itself when python3 with numpy is installed; and a set of malformed
   headers and a mutation loop that must give an error message, not a crash
   (run under ASan). */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/interp/interp.h"
#include "unit.h"

/* ---- helpers ---- */

static const char *tmpdir(void) {
  static char dir[64];
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/ts_npy_XXXXXX");
    if (!mkdtemp(dir)) snprintf(dir, sizeof dir, "/tmp");
  }
  return dir;
}

/* Remove the scratch directory and its files when the runner exits. */
__attribute__((destructor)) static void tmpdir_cleanup(void) {
  const char *d = tmpdir();
  if (strcmp(d, "/tmp") == 0) return;
  DIR *dir = opendir(d);
  if (!dir) return;
  char path[512];
  for (struct dirent *de; (de = readdir(dir));) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", d, de->d_name);
    unlink(path);
  }
  closedir(dir);
  rmdir(d);
}

static const char *tmpfile_path(const char *name) {
  static char path[4][256];
  static int k;
  k = (k + 1) % 4;
  snprintf(path[k], sizeof path[k], "%s/%s", tmpdir(), name);
  return path[k];
}

static void write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fwrite(p, 1, n, f);
  fclose(f);
}

/* A .npy file: version major, the header text as given (padded to 64 with
   spaces and '\n' when pad is set), then n data bytes. */
static size_t craft(unsigned char *out, int major, const char *hdr, bool pad, const void *data,
                    size_t n) {
  size_t pre = major == 1 ? 10 : 12, hl = strlen(hdr);
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  memcpy(out + pre, hdr, hl);
  if (pad) {
    while ((pre + hl + 1) % 64) out[pre + hl++] = ' ';
    out[pre + hl++] = '\n';
  }
  out[8] = (unsigned char)(hl & 0xff);
  out[9] = (unsigned char)(hl >> 8);
  if (major != 1) out[10] = out[11] = 0;
  memcpy(out + pre + hl, data, n);
  return pre + hl + n;
}

/* Write a crafted file and read it back; NULL with the message in err. */
static Tensor *read_crafted(int major, const char *hdr, const void *data, size_t n, char *err,
                            size_t errlen) {
  static unsigned char buf[8192];
  size_t len = craft(buf, major, hdr, true, data, n);
  const char *p = tmpfile_path("crafted.npy");
  write_bytes(p, buf, len);
  err[0] = '\0';
  return npy_read(p, err, errlen);
}

static bool shape_is(const Tensor *t, int rank, const int64_t *d) {
  if (t->shape.rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (t->shape.d[i].n != d[i]) return false;
  return true;
}

/* ---- round trips ---- */

TEST(npy_round_trip_values) {
  Shape s = {.rank = 2, .d = {{2, NULL}, {3, NULL}}};
  Tensor *t = tensor_new(&s, EK_REAL);
  double v[6] = {1.5, -0.0, NAN, INFINITY, -INFINITY, 1e-310};
  memcpy(t->data, v, sizeof v);
  char err[256] = "";
  const char *p = tmpfile_path("rt.npy");
  REQUIRE(npy_write(p, t, err, sizeof err));
  Tensor *r = npy_read(p, err, sizeof err);
  REQUIRE(r);
  CHECK(shape_is(r, 2, (int64_t[]){2, 3}) && r->kind == EK_REAL);
  CHECK(memcmp(r->data, v, sizeof v) == 0);
  /* the header is 64-byte aligned and says what numpy expects */
  FILE *f = fopen(p, "rb");
  unsigned char head[128];
  REQUIRE(f && fread(head, 1, 128, f) == 128);
  fclose(f);
  size_t hl = head[8] | (size_t)head[9] << 8;
  CHECK((10 + hl) % 64 == 0);
  CHECK(memcmp(head + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 58) == 0);
  CHECK(head[10 + hl - 1] == '\n');
  tensor_free(t);
  tensor_free(r);
}

TEST(npy_round_trip_scalar_vector_empty) {
  Shape shapes[3] = {{.rank = 0}, {.rank = 1, .d = {{5, NULL}}}, {.rank = 2, .d = {{0, NULL}, {3, NULL}}}};
  for (int k = 0; k < 3; k++) {
    Tensor *t = tensor_new(&shapes[k], EK_REAL);
    int64_t n = shape_numel(&shapes[k]);
    for (int64_t i = 0; i < n; i++) t->data[i] = (double)i * 0.25 - 1;
    char err[256] = "";
    const char *p = tmpfile_path("rt2.npy");
    REQUIRE(npy_write(p, t, err, sizeof err));
    Tensor *r = npy_read(p, err, sizeof err);
    REQUIRE(r);
    CHECK(shape_equal(&r->shape, &t->shape));
    CHECK(n == 0 || memcmp(r->data, t->data, (size_t)n * sizeof(double)) == 0);
    tensor_free(t);
    tensor_free(r);
  }
}

TEST(npy_write_bad_path) {
  Shape s = {.rank = 1, .d = {{1, NULL}}};
  Tensor *t = tensor_new(&s, EK_REAL);
  char err[256] = "";
  CHECK(!npy_write("/nonexistent-dir/x.npy", t, err, sizeof err));
  CHECK(strstr(err, "cannot open for writing"));
  tensor_free(t);
}

/* ---- crafted files: dtypes, byte orders, versions ---- */

TEST(npy_read_dtypes) {
  char err[256];
  float f4[3] = {1.5f, -2.25f, 3.0f};
  Tensor *t = read_crafted(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4, 12, err, sizeof err);
  REQUIRE(t);
  CHECK(t->kind == EK_REAL && t->data[0] == 1.5 && t->data[1] == -2.25 && t->data[2] == 3);
  tensor_free(t);

  int64_t i8[4] = {-3, 0, 7, (int64_t)1 << 40};
  t = read_crafted(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", i8, 32, err, sizeof err);
  REQUIRE(t);
  CHECK(t->kind == EK_INT && t->data[0] == -3 && t->data[3] == 1099511627776.0);
  tensor_free(t);

  int32_t i4[2] = {-5, 9};
  t = read_crafted(1, "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}", i4, 8, err, sizeof err);
  REQUIRE(t);
  CHECK(t->kind == EK_INT && t->data[0] == -5 && t->data[1] == 9);
  tensor_free(t);

  unsigned char b1[3] = {1, 0, 2};
  t = read_crafted(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b1, 3, err, sizeof err);
  REQUIRE(t);
  CHECK(t->kind == EK_BOOL && t->data[0] == 1 && t->data[1] == 0 && t->data[2] == 1);
  tensor_free(t);

  unsigned char u1[2] = {255, 3};
  t = read_crafted(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", u1, 2, err, sizeof err);
  REQUIRE(t);
  CHECK(t->data[0] == 255 && t->data[1] == 3);
  tensor_free(t);

  int16_t i2[2] = {-300, 300};
  t = read_crafted(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", i2, 4, err, sizeof err);
  REQUIRE(t);
  CHECK(t->data[0] == -300 && t->data[1] == 300);
  tensor_free(t);

  uint16_t f2[3] = {0x3c00, 0xc000, 0x7c00}; /* 1, -2, inf */
  t = read_crafted(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", f2, 6, err, sizeof err);
  REQUIRE(t);
  CHECK(t->data[0] == 1 && t->data[1] == -2 && isinf(t->data[2]));
  tensor_free(t);
}

TEST(npy_read_big_endian_scalar_versions) {
  char err[256];
  unsigned char be[8] = {0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}; /* pi */
  Tensor *t = read_crafted(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }", be, 8, err, sizeof err);
  REQUIRE(t);
  CHECK(t->shape.rank == 0 && t->data[0] == 3.141592653589793);
  tensor_free(t);
  double d[2] = {4, 5};
  for (int major = 2; major <= 3; major++) {
    t = read_crafted(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", d, 16, err, sizeof err);
    REQUIRE(t);
    CHECK(t->data[0] == 4 && t->data[1] == 5);
    tensor_free(t);
  }
}

/* ---- malformed ---- */

TEST(npy_malformed_headers) {
  static const struct { const char *hdr, *msg; } bad[] = {
      {"{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", "Fortran-order"},
      {"{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
      {"{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
      {"{'descr': '<f', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
      {"{'descr': '<f8x', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype"},
      {"{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", "structured"},
      {"{'descr': '<f8', 'shape': (2,), }", "lacks"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}", "unexpected key"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", "twice"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", "non-negative"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [2], }", "tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2 3), }", "expected ','"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': (2,), }", "malformed"},
      {"{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }", "True or False"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), } junk", "after the header"},
      {"['descr', '<f8']", "not a dict"},
      {"", "not a dict"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", "rank above"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", "too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", "data bytes"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), ", "expected"},
      {"{'descr': '<f8' 'fortran_order': False}", "expected"},
  };
  double d[2] = {1, 2};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char err[256];
    Tensor *t = read_crafted(1, bad[i].hdr, d, 16, err, sizeof err);
    if (t || !strstr(err, bad[i].msg)) {
      fprintf(stderr, "  header %s: got '%s'\n", bad[i].hdr, t ? "(read)" : err);
      CHECK(0);
    }
    tensor_free(t);
  }
}

TEST(npy_malformed_preamble) {
  char err[256];
  const char *p = tmpfile_path("pre.npy");
  struct { const char *bytes; size_t n; const char *msg; } bad[] = {
      {"\x93NUMPX\x01\x00\x10\x00", 10, "bad magic"},
      {"\x93NUM", 4, "bad magic"},
      {"\x93NUMPY\x04\x00\x10\x00", 10, "version 4.0"},
      {"\x93NUMPY\x01\x05\x10\x00", 10, "version 1.5"},
      {"\x93NUMPY\x01\x00\x10", 9, "truncated"},
      {"\x93NUMPY\x01\x00\xff\xff{'descr'", 17, "truncated"},
      {"\x93NUMPY\x02\x00\xff\xff\xff\x7f", 12, "claims"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_bytes(p, bad[i].bytes, bad[i].n);
    err[0] = '\0';
    Tensor *t = npy_read(p, err, sizeof err);
    CHECK(!t);
    if (!strstr(err, bad[i].msg)) {
      fprintf(stderr, "  case %zu: got '%s'\n", i, err);
      CHECK(0);
    }
  }
  CHECK(!npy_read(tmpfile_path("does-not-exist.npy"), err, sizeof err));
  CHECK(strstr(err, "cannot open"));
  /* a tiny err buffer is fine */
  char tiny[4];
  CHECK(!npy_read(tmpfile_path("does-not-exist.npy"), tiny, sizeof tiny));
  CHECK(strlen(tiny) < 4);
}

/* Flip header bytes of a valid file at random: every read must either
   succeed or fail with a message (ASan checks the rest). */
TEST(npy_mutated_headers_do_not_crash) {
  unsigned char good[256], buf[256];
  double d[6] = {1, 2, 3, 4, 5, 6};
  size_t n = craft(good, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", true, d, sizeof d);
  const char *p = tmpfile_path("mut.npy");
  Rng rng;
  rng_seed(&rng, 7);
  static const char alphabet[] = "{}()[]',: \"0123456789-LTrueFalsedescr<>|f8i4b1\n\0\x93";
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(buf, good, n);
    int flips = 1 + (int)rng_below(&rng, 4);
    for (int k = 0; k < flips; k++) {
      size_t at = (size_t)rng_below(&rng, 74);
      buf[at] = rng_below(&rng, 2) ? (unsigned char)alphabet[rng_below(&rng, sizeof alphabet - 1)]
                                   : (unsigned char)rng_below(&rng, 256);
    }
    size_t len = rng_below(&rng, 8) ? n : (size_t)rng_below(&rng, (int64_t)n);
    write_bytes(p, buf, len);
    char err[256] = "";
    Tensor *t = npy_read(p, err, sizeof err);
    if (t) ok++;
    else if (err[0]) failed++;
    else CHECK(!"failed without a message");
    tensor_free(t);
  }
  CHECK(ok > 0 && failed > 0);
}

/* ---- files written by NumPy ---- */

TEST(npy_read_numpy_files) {
  if (system("python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
    fprintf(stderr, "  (numpy not installed: skipping npy_read_numpy_files)\n");
    return;
  }
  char cmd[2048];
  const char *d = tmpdir();
  snprintf(cmd, sizeof cmd,
           "python3 -c \"import numpy as np; d='%s';"
           "np.save(d+'/f4.npy', np.arange(6, dtype=np.float32).reshape(2,3)/4);"
           "np.save(d+'/i8.npy', np.array([[-1, 2**40], [3, 4]], dtype=np.int64));"
           "np.save(d+'/b1.npy', np.array([True, False, True]));"
           "np.save(d+'/sc.npy', np.float64(2.5));"
           "np.save(d+'/be.npy', np.array([1.0, -3.5], dtype='>f8'));"
           "np.save(d+'/fo.npy', np.asfortranarray(np.ones((2, 3))));"
           "np.lib.format.write_array(open(d+'/v2.npy','wb'), np.array([7.0]), version=(2,0))\"",
           d);
  REQUIRE(system(cmd) == 0);
  char err[256], path[512];
#define LOAD(name) (snprintf(path, sizeof path, "%s/%s", d, name), npy_read(path, err, sizeof err))
  Tensor *t = LOAD("f4.npy");
  REQUIRE(t);
  CHECK(shape_is(t, 2, (int64_t[]){2, 3}) && t->kind == EK_REAL && t->data[5] == 1.25);
  tensor_free(t);
  t = LOAD("i8.npy");
  REQUIRE(t);
  CHECK(t->kind == EK_INT && t->data[0] == -1 && t->data[1] == 1099511627776.0 && t->data[3] == 4);
  tensor_free(t);
  t = LOAD("b1.npy");
  REQUIRE(t);
  CHECK(t->kind == EK_BOOL && t->data[0] == 1 && t->data[1] == 0 && t->data[2] == 1);
  tensor_free(t);
  t = LOAD("sc.npy");
  REQUIRE(t);
  CHECK(t->shape.rank == 0 && t->data[0] == 2.5);
  tensor_free(t);
  t = LOAD("be.npy");
  REQUIRE(t);
  CHECK(t->data[0] == 1 && t->data[1] == -3.5);
  tensor_free(t);
  t = LOAD("v2.npy");
  REQUIRE(t);
  CHECK(t->data[0] == 7);
  tensor_free(t);
  t = LOAD("fo.npy");
  CHECK(!t && strstr(err, "Fortran"));
#undef LOAD
  /* and numpy reads what we write */
  Shape s = {.rank = 2, .d = {{2, NULL}, {2, NULL}}};
  Tensor *w = tensor_new(&s, EK_REAL);
  for (int i = 0; i < 4; i++) w->data[i] = i + 0.5;
  snprintf(path, sizeof path, "%s/ours.npy", d);
  REQUIRE(npy_write(path, w, err, sizeof err));
  tensor_free(w);
  snprintf(cmd, sizeof cmd,
           "python3 -c \"import numpy as np, sys; a=np.load('%s');"
           "sys.exit(0 if a.dtype==np.float64 and a.shape==(2,2) and a[1,1]==3.5 else 1)\"",
           path);
  CHECK(system(cmd) == 0);
}
