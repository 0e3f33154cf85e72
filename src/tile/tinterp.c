/*
 * tinterp.c: the tile interpreter, the reference semantics of tile programs.
 *
 * Design.  A run (TRun) holds one malloc'd Tensor per global buffer, in the
 * order of tp->globals: inputs are copied in rounded to their storage type,
 * temporaries and the output start as NaN, so a read of something no kernel
 * wrote shows up as NaN rather than as a plausible zero.  Kernels run one
 * after another, and each kernel's blocks run sequentially (bz, then by,
 * then bx, innermost); a block first poisons its tile buffers with NaN, then
 * runs `pre`, the loop body for k = 0 .. loop-1, and `post`.
 *
 * Values.  Every value is a double.  Real values are float32 while they are
 * computed: each elementwise op rounds its result with (float), real
 * constants are read as float32; a value written to a buffer is rounded to
 * the buffer's dtype (a shared tile in the storage type, a fragment in
 * float32, a global in its dtype, integers truncated).  Integer and boolean
 * values are held exactly.  T.gemm and T.reduce accumulate in double and
 * round to the destination once per statement (one rounding where the GPU
 * rounds per partial sum: well inside verify's tolerances).  The
 * elementwise ops mirror src/interp/interp.c exactly (stable sigmoid,
 * NaN-propagating relu/max/min, select evaluating only the chosen branch).
 *
 * Faults.  An out-of-bounds load or store, an out-of-range tile index, an
 * index that is not an integer, a division by zero in index arithmetic or a
 * malformed statement stops the run: the fault records the kernel, the
 * statement and a message with the offending index, and unwinds (longjmp)
 * to tile_run, which frees what it must.  Nothing is allocated per element:
 * tile buffers are allocated once per kernel and a map writes through one
 * scratch buffer (so a map reading its own destination sees old values, as
 * the parallel loop it stands for would).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/interp.h"
#include "tile.h"

#define TILE_MAX_ELEMS ((int64_t)1 << 28)
#define TILE_MAX_WORK 4e9 /* element operations (some seconds); more is a fault, not a hang */

typedef struct TRun {
  const TileProgram *tp;
  Tensor **g;            /* per global (tp->globals order) */
  int64_t (*gst)[TS_MAX_RANK]; /* row-major strides of each global */
  const Kernel *k;
  double **tdata;        /* per tile buffer of the current kernel */
  int64_t *trows, *tcols;
  int ntiles;
  double *scratch;
  bool *rowfin;          /* gemm: which rows of B are finite */
  int64_t var[TV_COUNT]; /* bx by bz i j k k1 k2 */
  double work;           /* element operations so far */
  const Stmt *stmt;
  TileFault *fault;
  jmp_buf jb;
} TRun;

static TS_NORETURN void fail(TRun *r, const char *fmt, ...) TS_PRINTF(2, 3);
static TS_NORETURN void fail(TRun *r, const char *fmt, ...) {
  TileFault *f = r->fault;
  f->hit = true;
  f->kernel = r->k;
  f->stmt = r->stmt;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->msg, sizeof f->msg, fmt, ap);
  va_end(ap);
  longjmp(r->jb, 1);
}

static int global_index(TRun *r, const TBuf *b) {
  const BufList *gl = &r->tp->globals;
  if (b->id >= 0 && b->id < gl->len && gl->data[b->id] == b) return b->id;
  for (int i = 0; i < gl->len; i++)
    if (gl->data[i] == b) return i;
  fail(r, "'%s' is not a global tensor of the program", b->name);
}

static int tile_index(TRun *r, const TBuf *b) {
  const BufList *bl = &r->k->bufs;
  if (b->id >= 0 && b->id < bl->len && bl->data[b->id] == b) return b->id;
  for (int i = 0; i < bl->len; i++)
    if (bl->data[i] == b) return i;
  fail(r, "'%s' is not a tile buffer of this kernel", b->name);
}

/* ---- elementwise ops: the same functions as the graph interpreter ---- */

static double f_sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}
static double f_relu(double x) { return isnan(x) || x > 0 ? x : 0.0; }
static double f_max(double a, double b) { return isnan(a) ? a : isnan(b) ? b : a >= b ? a : b; }
static double f_min(double a, double b) { return isnan(a) ? a : isnan(b) ? b : a <= b ? a : b; }

static double ev(TRun *r, const SExpr *e);
static void exec_list(TRun *r, const StmtList *l);

static double ev_op(TRun *r, const SExpr *e) {
  if ((unsigned)e->op >= OP_COUNT) fail(r, "an unknown op");
  if (e->n < 1 || e->n > 3 || e->n != op_info[e->op].arity)
    fail(r, "%s applied to %d operands", op_info[e->op].name, e->n);
  double x = 0, y = 0, v = 0;
  switch (e->op) {
  case OP_SELECT: {
    /* lazy: only the chosen branch is evaluated */
    double c = ev(r, e->a[0]);
    v = ev(r, c != 0 ? e->a[1] : e->a[2]);
    return e->ek == EK_REAL ? (double)(float)v : v;
  }
  case OP_NEG:
  case OP_EXP:
  case OP_LOG:
  case OP_SQRT:
  case OP_RSQRT:
  case OP_TANH:
  case OP_ERF:
  case OP_SIGMOID:
  case OP_RELU:
  case OP_ABS:
  case OP_CAST: x = ev(r, e->a[0]), y = 0; break;
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_IDIV:
  case OP_POW:
  case OP_MAX:
  case OP_MIN:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE: x = ev(r, e->a[0]), y = ev(r, e->a[1]); break;
  case OP_COUNT:
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN:
  case OP_MATMUL:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER: fail(r, "'%s' is not an elementwise op", op_info[e->op].name);
  }
  switch (e->op) {
  case OP_NEG: v = -x; break;
  case OP_EXP: v = exp(x); break;
  case OP_LOG: v = log(x); break;
  case OP_SQRT: v = sqrt(x); break;
  case OP_RSQRT: v = 1.0 / sqrt(x); break;
  case OP_TANH: v = tanh(x); break;
  case OP_ERF: v = erf(x); break;
  case OP_SIGMOID: v = f_sigmoid(x); break;
  case OP_RELU: v = f_relu(x); break;
  case OP_ABS: v = fabs(x); break;
  case OP_CAST: v = x; break;
  case OP_ADD: v = x + y; break;
  case OP_SUB: v = x - y; break;
  case OP_MUL: v = x * y; break;
  case OP_DIV: v = x / y; break;
  case OP_IDIV: v = idiv_euclid(x, y); break;
  case OP_POW: v = pow(x, y); break;
  case OP_MAX: v = f_max(x, y); break;
  case OP_MIN: v = f_min(x, y); break;
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE: return op_compare(e->op, x, y);
  case OP_COUNT:
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
  case OP_SELECT:
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN:
  case OP_MATMUL:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER: fail(r, "'%s' is not an elementwise op", e->op == OP_COUNT ? "?" : op_info[e->op].name);
  }
  return e->ek == EK_REAL ? (double)(float)v : v;
}

static int64_t as_index(TRun *r, double v) {
  if (!(v > -4e18 && v < 4e18) || v != floor(v)) fail(r, "index arithmetic on %g, not an integer", v);
  return (int64_t)v;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static void index_str(char *buf, size_t n, const char *name, const int64_t *ix, int k) {
  size_t used = (size_t)snprintf(buf, n, "%s[", name);
  for (int d = 0; d < k && used < n; d++) used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? ", " : "", (long long)ix[d]);
  if (used < n) snprintf(buf + used, n - used, "]");
}

static double ev(TRun *r, const SExpr *e) {
  if (!e) fail(r, "a missing expression");
  switch (e->kind) {
  case SX_INT: return (double)e->i;
  case SX_REAL: return isfinite(e->f) ? (double)(float)e->f : e->f;
  case SX_VAR:
    if ((unsigned)e->var >= TV_COUNT) fail(r, "an unknown index variable");
    return (double)r->var[e->var];
  case SX_IDX: {
    int64_t a = as_index(r, ev(r, e->a[0])), b = as_index(r, ev(r, e->a[1]));
    switch (e->iop) {
    case IX_ADD: return (double)(a + b);
    case IX_SUB: return (double)(a - b);
    case IX_MUL: return (double)(a * b);
    case IX_DIV:
      if (!b) fail(r, "index division by zero");
      return (double)floor_div(a, b);
    case IX_MOD:
      if (!b) fail(r, "index modulo by zero");
      return (double)(a - floor_div(a, b) * b);
    case IX_MIN: return (double)(a < b ? a : b);
    case IX_MAX: return (double)(a > b ? a : b);
    case IX_LT: return a < b;
    case IX_AND: return a && b;
    }
    fail(r, "an unknown index op");
  }
  case SX_LOAD: {
    int gi = global_index(r, e->buf);
    const Tensor *t = r->g[gi];
    if (e->nidx != t->shape.rank) fail(r, "load of '%s' with %d indices, it has %d dimensions", e->buf->name, e->nidx, t->shape.rank);
    int64_t ix[TS_MAX_RANK], off = 0;
    bool oob = false;
    for (int d = 0; d < e->nidx; d++) {
      double v = ev(r, e->idx[d]);
      ix[d] = isnan(v) ? -1 : v < -1e18 ? -1 : v > 1e18 ? INT64_MAX : (int64_t)v;
      if (!(v >= 0 && v < (double)t->shape.d[d].n) || v != floor(v)) oob = true;
      else off += ix[d] * r->gst[gi][d];
    }
    if (oob) {
      char buf[200];
      index_str(buf, sizeof buf, e->buf->name, ix, e->nidx);
      fail(r, "out-of-bounds load of %s at i=%lld j=%lld k=%lld", buf, (long long)r->var[TV_I],
           (long long)r->var[TV_J], (long long)r->var[TV_K]);
    }
    return t->data[off];
  }
  case SX_TILE: {
    int ti = tile_index(r, e->buf);
    if (e->nidx < 1 || e->nidx > 2 || e->nidx != e->buf->shape.rank)
      fail(r, "tile read of '%s' with %d indices", e->buf->name, e->nidx);
    int64_t ix[2] = {0, 0};
    for (int d = 0; d < e->nidx; d++) ix[d] = as_index(r, ev(r, e->idx[d]));
    int64_t cols = e->nidx == 2 ? r->tcols[ti] : 1;
    if (ix[0] < 0 || ix[0] >= r->trows[ti] || ix[1] < 0 || ix[1] >= cols) {
      char buf[200];
      index_str(buf, sizeof buf, e->buf->name, ix, e->nidx);
      fail(r, "out-of-range tile read %s", buf);
    }
    return r->tdata[ti][ix[0] * cols + ix[1]];
  }
  case SX_OP: return ev_op(r, e);
  }
  fail(r, "an unknown expression kind");
}

/* ---- statements ---- */

static double *tile_of(TRun *r, const TBuf *b, int64_t *rows, int64_t *cols) {
  if (!b) fail(r, "a statement without its tile buffer");
  int ti = tile_index(r, b);
  *rows = r->trows[ti];
  *cols = r->tcols[ti] ? r->tcols[ti] : 1;
  return r->tdata[ti];
}

/* Count n element operations; too many is a fault. */
static void charge(TRun *r, double n) {
  r->work += n;
  if (r->work > TILE_MAX_WORK) fail(r, "the program is too large to interpret (over %.0g element operations)", TILE_MAX_WORK);
}

static void exec_stmt(TRun *r, const Stmt *s) {
  r->stmt = s;
  r->var[TV_I] = r->var[TV_J] = 0;
  int64_t rows, cols;
  switch (s->kind) {
  case ST_FILL: {
    double *d = tile_of(r, s->dst, &rows, &cols);
    double v = dtype_round(s->dst->dtype, ev(r, s->value));
    for (int64_t i = 0; i < rows * cols; i++) d[i] = v;
    return;
  }
  case ST_MAP: {
    double *d = tile_of(r, s->dst, &rows, &cols);
    charge(r, (double)(rows * cols));
    if (s->mask && !s->other) fail(r, "a masked map without an other value");
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        r->var[TV_I] = i;
        r->var[TV_J] = j;
        double v = !s->mask || ev(r, s->mask) != 0 ? ev(r, s->value) : ev(r, s->other);
        r->scratch[i * cols + j] = dtype_round(s->dst->dtype, v);
      }
    memcpy(d, r->scratch, (size_t)(rows * cols) * sizeof(double));
    return;
  }
  case ST_GEMM: {
    int64_t ar, ac, br, bc;
    double *d = tile_of(r, s->dst, &rows, &cols);
    const double *a0 = tile_of(r, s->a, &ar, &ac), *b0 = tile_of(r, s->b, &br, &bc);
    /* a transposed operand is copied into scratch in its plain layout */
    const double *a = a0, *b = b0;
    double *ta = NULL, *tb = NULL;
    if (s->trans_a || s->trans_b) {
      ta = s->trans_a ? malloc((size_t)(ar * ac) * sizeof(double)) : NULL;
      tb = s->trans_b ? malloc((size_t)(br * bc) * sizeof(double)) : NULL;
      if ((s->trans_a && !ta) || (s->trans_b && !tb)) {
        free(ta);
        free(tb);
        fail(r, "out of memory");
      }
      if (ta) {
        for (int64_t x = 0; x < ar; x++)
          for (int64_t y = 0; y < ac; y++) ta[y * ar + x] = a0[x * ac + y];
        int64_t t = ar;
        ar = ac, ac = t, a = ta;
      }
      if (tb) {
        for (int64_t x = 0; x < br; x++)
          for (int64_t y = 0; y < bc; y++) tb[y * br + x] = b0[x * bc + y];
        int64_t t = br;
        br = bc, bc = t, b = tb;
      }
    }
    if (ac != br || ar != rows || bc != cols) {
      free(ta);
      free(tb);
      fail(r, "gemm of tiles whose shapes do not agree");
    }
    charge(r, (double)rows * (double)cols * (double)ac);
    double *acc = r->scratch;
    for (int64_t i = 0; i < rows * cols; i++) acc[i] = 0;
    /* Masked tails make tiles mostly zeros; skipping them is exact: a zero
       of A times a finite row of B adds (+-)0 to a sum that starts at +0,
       and columns of B that are zero in every row give 0 when A is finite.
       (An infinity or NaN anywhere keeps the full product.) */
    bool a_finite = true;
    int64_t jend = 0;
    for (int64_t i = 0; i < ar * ac; i++) a_finite &= isfinite(a[i]) != 0;
    for (int64_t k = 0; k < br; k++)
      for (int64_t j = cols - 1; j >= jend; j--)
        if (b[k * bc + j] != 0 || isnan(b[k * bc + j])) {
          jend = j + 1;
          break;
        }
    if (!a_finite) jend = cols;
    for (int64_t k = 0; k < br; k++) {
      bool fin = true;
      for (int64_t j = 0; j < cols && fin; j++) fin = isfinite(b[k * bc + j]) != 0;
      r->rowfin[k] = fin;
    }
    for (int64_t i = 0; i < rows; i++)
      for (int64_t k = 0; k < ac; k++) {
        double x = a[i * ac + k];
        if (x == 0 && r->rowfin[k]) continue;
        const double *brow = b + k * bc;
        double *crow = acc + i * cols;
        for (int64_t j = 0; j < jend; j++) crow[j] += x * brow[j];
      }
    free(ta);
    free(tb);
    for (int64_t i = 0; i < rows * cols; i++) d[i] = dtype_round(s->dst->dtype, d[i] + acc[i]);
    return;
  }
  case ST_REDUCE: {
    int64_t ar, ac;
    double *d = tile_of(r, s->dst, &rows, &cols);
    const double *a = tile_of(r, s->a, &ar, &ac);
    if (ar != rows || cols != 1) fail(r, "reduce of tiles whose shapes do not agree");
    const Monoid *m = op_monoid(s->reduce_op);
    if (!m || s->reduce_op == OP_MATMUL)
      fail(r, "reduce with '%s', which is not a reduction", (unsigned)s->reduce_op < OP_COUNT ? op_info[s->reduce_op].name : "?");
    for (int64_t i = 0; i < rows; i++) {
      const double *row = a + i * ac;
      /* the tile's own fold first, then the accumulator (a sum's order as the targets add) */
      double acc = m->identity;
      for (int64_t j = 0; j < ac; j++) acc = monoid_fold(m, acc, row[j], !s->nan_ok);
      if (!s->clear) acc = monoid_fold(m, d[i], acc, !s->nan_ok);
      d[i] = dtype_round(s->dst->dtype, acc);
    }
    return;
  }
  case ST_STORE:
  case ST_ATOMIC_ADD: {
    if (!s->global) fail(r, "a store without its global tensor");
    int gi = global_index(r, s->global);
    Tensor *t = r->g[gi];
    if (s->ngidx != t->shape.rank) fail(r, "store to '%s' with %d indices, it has %d dimensions", s->global->name, s->ngidx, t->shape.rank);
    if (s->ext[0] < 0 || s->ext[1] < 0 || s->ext[0] > TILE_MAX_ELEMS || s->ext[1] > TILE_MAX_ELEMS / (s->ext[0] ? s->ext[0] : 1))
      fail(r, "store over [%lld, %lld]", (long long)s->ext[0], (long long)s->ext[1]);
    charge(r, (double)s->ext[0] * (double)s->ext[1]);
    for (int64_t i = 0; i < s->ext[0]; i++)
      for (int64_t j = 0; j < s->ext[1]; j++) {
        r->var[TV_I] = i;
        r->var[TV_J] = j;
        if (s->mask && ev(r, s->mask) == 0) continue;
        int64_t ix[TS_MAX_RANK], off = 0;
        bool oob = false;
        for (int d = 0; d < s->ngidx; d++) {
          double v = ev(r, s->gidx[d]);
          ix[d] = isnan(v) ? -1 : v < -1e18 ? -1 : v > 1e18 ? INT64_MAX : (int64_t)v;
          if (!(v >= 0 && v < (double)t->shape.d[d].n) || v != floor(v)) oob = true;
          else off += ix[d] * r->gst[gi][d];
        }
        if (oob) {
          char buf[200];
          index_str(buf, sizeof buf, s->global->name, ix, s->ngidx);
          fail(r, "out-of-bounds %s to %s at i=%lld j=%lld", s->kind == ST_STORE ? "store" : "atomic add", buf,
               (long long)i, (long long)j);
        }
        double v = ev(r, s->value);
        t->data[off] = dtype_round(s->global->dtype, s->kind == ST_STORE ? v : t->data[off] + v);
      }
    return;
  }
  case ST_LOOP: {
    if ((unsigned)s->var >= TV_COUNT || s->var < TV_K) fail(r, "a loop over a variable that is not a loop variable");
    int64_t lo = as_index(r, ev(r, s->lo)), hi = as_index(r, ev(r, s->hi));
    charge(r, hi > lo ? (double)(hi - lo) : 0);
    for (int64_t v = lo; v < hi; v++) {
      r->var[s->var] = v;
      exec_list(r, &s->body);
      r->stmt = s;
    }
    r->var[s->var] = 0;
    return;
  }
  case ST_IF: {
    bool take = ev(r, s->cond) != 0;
    exec_list(r, take ? &s->body : &s->orelse);
    return;
  }
  }
  fail(r, "an unknown statement kind");
}

static void exec_list(TRun *r, const StmtList *l) {
  for (int i = 0; i < l->len; i++) exec_stmt(r, l->data[i]);
}

static void free_tiles(TRun *r) {
  for (int i = 0; i < r->ntiles; i++) free(r->tdata[i]);
  free(r->tdata);
  free(r->trows);
  free(r->tcols);
  free(r->scratch);
  free(r->rowfin);
  r->rowfin = NULL;
  r->tdata = NULL;
  r->scratch = NULL;
  r->trows = r->tcols = NULL;
  r->ntiles = 0;
}

static void run_kernel(TRun *r, const Kernel *k) {
  r->k = k;
  r->stmt = NULL;
  int n = k->bufs.len;
  r->tdata = calloc((size_t)(n ? n : 1), sizeof *r->tdata);
  r->trows = calloc((size_t)(n ? n : 1), sizeof *r->trows);
  r->tcols = calloc((size_t)(n ? n : 1), sizeof *r->tcols);
  if (!r->tdata || !r->trows || !r->tcols) fail(r, "out of memory");
  r->ntiles = n;
  int64_t most = 1;
  for (int i = 0; i < n; i++) {
    const TBuf *b = k->bufs.data[i];
    if (b->shape.rank < 1 || b->shape.rank > 2) fail(r, "tile buffer '%s' of rank %d", b->name, b->shape.rank);
    int64_t rows = b->shape.d[0].n, cols = b->shape.rank == 2 ? b->shape.d[1].n : 0;
    int64_t c1 = cols ? cols : 1;
    if (rows < 0 || cols < 0 || rows > (1 << 20) || c1 > (1 << 20) / (rows ? rows : 1))
      fail(r, "tile buffer '%s' is too large", b->name);
    r->trows[i] = rows;
    r->tcols[i] = cols;
    int64_t cells = rows * c1;
    r->tdata[i] = malloc((size_t)(cells > 0 ? cells : 1) * sizeof(double));
    if (!r->tdata[i]) fail(r, "out of memory");
    if (rows * c1 > most) most = rows * c1;
  }
  r->scratch = malloc((size_t)most * sizeof(double));
  r->rowfin = malloc((size_t)most * sizeof(bool));
  if (!r->scratch || !r->rowfin) fail(r, "out of memory");
  for (int d = 0; d < 3; d++)
    if (k->grid[d] < 1) fail(r, "empty grid");
  for (int64_t bz = 0; bz < k->grid[2]; bz++)
    for (int64_t by = 0; by < k->grid[1]; by++)
      for (int64_t bx = 0; bx < k->grid[0]; bx++) {
        r->var[TV_BX] = bx;
        r->var[TV_BY] = by;
        r->var[TV_BZ] = bz;
        for (int v = TV_K; v < TV_COUNT; v++) r->var[v] = 0;
        charge(r, (double)most);
        for (int i = 0; i < n; i++) {
          int64_t m = r->trows[i] * (r->tcols[i] ? r->tcols[i] : 1);
          for (int64_t e = 0; e < m; e++) r->tdata[i][e] = NAN;
        }
        exec_list(r, &k->body);
      }
  free_tiles(r);
  r->k = NULL;
}

/* The path of s below list l (see tile.h), appended to buf; true if found. */
typedef struct Where { char *buf; size_t n, used; } Where;

static void where_add(Where *w, const char *fmt, int i) {
  if (w->used < w->n) w->used += (size_t)snprintf(w->buf + w->used, w->n - w->used, fmt, i);
}

static bool where_in(const StmtList *l, const Stmt *s, const char *name, Where *w) {
  size_t mark = w->used;
  for (int i = 0; i < l->len; i++) {
    const Stmt *t = l->data[i];
    w->used = mark;
    if (t == s) {
      where_add(w, name, i);
      return true;
    }
    if (t->kind == ST_LOOP || t->kind == ST_IF) {
      where_add(w, name, i);
      if (t->kind == ST_LOOP && where_in(&t->body, s, ".loop[%d]", w)) return true;
      if (t->kind == ST_IF && (where_in(&t->body, s, ".then[%d]", w) || where_in(&t->orelse, s, ".else[%d]", w)))
        return true;
    }
  }
  w->used = mark;
  if (w->used < w->n) w->buf[w->used] = 0;
  return false;
}

const char *tile_stmt_where(const Kernel *k, const Stmt *s, char *buf, size_t n) {
  const StmtList *top = &k->body;
  int first = -1, last = -1;
  for (int i = 0; i < top->len; i++)
    if (top->data[i]->kind == ST_LOOP) {
      if (first < 0) first = i;
      last = i;
    }
  Where w = {buf, n, 0};
  snprintf(buf, n, "%s ", k->name);
  w.used = strlen(buf);
  for (int i = 0; i < top->len; i++) {
    const Stmt *t = top->data[i];
    size_t mark = w.used;
    if (t == s) {
      if (first < 0 || i < first) where_add(&w, "pre[%d]", i);
      else if (i > last) where_add(&w, "post[%d]", i - last - 1);
      else where_add(&w, "body[%d]", i);
      return buf;
    }
    /* the statements of a kernel's single top-level loop are loop[i], as
       the naive kernels have always named them */
    if (t->kind == ST_LOOP && first == last && where_in(&t->body, s, "loop[%d]", &w)) return buf;
    w.used = mark;
    if (t->kind == ST_LOOP || t->kind == ST_IF) {
      where_add(&w, "body[%d]", i);
      if (t->kind == ST_LOOP && where_in(&t->body, s, ".loop[%d]", &w)) return buf;
      if (t->kind == ST_IF && (where_in(&t->body, s, ".then[%d]", &w) || where_in(&t->orelse, s, ".else[%d]", &w)))
        return buf;
    }
    w.used = mark;
    buf[w.used < n ? w.used : n - 1] = 0;
  }
  snprintf(buf, n, "%s", k->name);
  return buf;
}

/* Allocate the globals and run every kernel; a fault longjmps out. */
static Tensor *run_all(TRun *r, Tensor **inputs) {
  const TileProgram *tp = r->tp;
  int ng = tp->globals.len;
  if (!r->g || !r->gst) fail(r, "out of memory");
  int64_t total = 0;
  for (int gi = 0; gi < ng; gi++) {
    const TBuf *b = tp->globals.data[gi];
    if (b->shape.rank < 0 || b->shape.rank > TS_MAX_RANK) fail(r, "global '%s' of rank %d", b->name, b->shape.rank);
    int64_t n = 1;
    for (int d = 0; d < b->shape.rank; d++) {
      int64_t m = b->shape.d[d].n;
      if (m < 0 || (m && n > TILE_MAX_ELEMS / m)) fail(r, "global '%s' is too large to interpret", b->name);
      n *= m;
    }
    total += n;
    if (total > TILE_MAX_ELEMS) fail(r, "the globals are too large to interpret");
    ElemKind ek = b->node ? b->node->kind : EK_REAL;
    Tensor *t = r->g[gi] = tensor_new(&b->shape, ek);
    if (!t) fail(r, "out of memory for global '%s'", b->name);
    int64_t acc = 1;
    for (int d = b->shape.rank - 1; d >= 0; d--) {
      r->gst[gi][d] = acc;
      acc *= b->shape.d[d].n;
    }
    if (b->role == GB_SCRATCH) {
      for (int64_t e = 0; e < n; e++) t->data[e] = b->init;
    } else if (b->role == GB_INPUT) {
      int ii = b->node ? b->node->input_index : -1;
      const Tensor *in = ii >= 0 && ii < tp->g->ninputs ? inputs[ii] : NULL;
      if (!in || !shape_equal(&in->shape, &b->shape)) fail(r, "no input of the right shape for '%s'", b->name);
      for (int64_t e = 0; e < n; e++) t->data[e] = dtype_round(b->dtype, in->data[e]);
    } else {
      for (int64_t e = 0; e < n; e++) t->data[e] = NAN;
    }
  }
  for (int ki = 0; ki < tp->kernels.len; ki++) run_kernel(r, tp->kernels.data[ki]);
  return tp->output ? r->g[global_index(r, tp->output)] : NULL;
}

static Tensor *run_protected(TRun *r, Tensor **inputs) {
  if (setjmp(r->jb)) return NULL;
  return run_all(r, inputs);
}

Tensor *tile_run(const TileProgram *tp, Tensor **inputs, Tensor **globals, TileFault *fault) {
  TileFault local;
  if (!fault) fault = &local;
  memset(fault, 0, sizeof *fault);
  int ng = tp->globals.len;
  TRun *r = calloc(1, sizeof *r);
  if (!r) {
    fault->hit = true;
    snprintf(fault->msg, sizeof fault->msg, "out of memory");
    return NULL;
  }
  r->tp = tp;
  r->fault = fault;
  r->g = calloc((size_t)(ng ? ng : 1), sizeof *r->g);
  r->gst = calloc((size_t)(ng ? ng : 1), sizeof *r->gst);
  Tensor *out = run_protected(r, inputs);
  free_tiles(r);
  if (fault->hit) out = NULL;
  for (int gi = 0; r->g && gi < ng; gi++) {
    if (globals) globals[gi] = r->g[gi] == out ? NULL : r->g[gi];
    else if (r->g[gi] != out) tensor_free(r->g[gi]);
  }
  if (globals && out) {
    /* the caller gets the output twice: as the result and as its global */
    for (int gi = 0; gi < ng; gi++)
      if (r->g[gi] == out) {
        globals[gi] = tensor_new(&out->shape, out->kind);
        if (globals[gi]) memcpy(globals[gi]->data, out->data, (size_t)shape_numel(&out->shape) * sizeof(double));
      }
  }
  free(r->g);
  free(r->gst);
  free(r);
  return out;
}
