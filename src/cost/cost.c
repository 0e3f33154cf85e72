/*
 * cost.c: the analytic cost of tile programs (see cost.h for the model).
 *
 * Calibration constants, measured on the H200 (docs/BENCHMARKS.md): a
 * device copy reaches 0.88 of the datasheet bandwidth, a bf16 matrix
 * product 0.80 of the datasheet tensor-core rate (cuBLAS, 8192^3), and
 * TileLang's textbook GEMM 0.63 (128x256 tiles), 0.53 (128x128) and 0.11
 * (64x64) of it: the tile-size derating interpolates those in log2 of the
 * tile's area, no lower than 0.08 (small tiles run as mma.sync, not as
 * warpgroup products: not measured yet).  Re-reads of a tile by other blocks miss L2 at MISS_RATE.
 * Half the SMs saturate HBM; fewer blocks than SMs leave the rest idle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"

#define MEM_EFF 0.88
#define TC_EFF 0.80
#define MISS_RATE 0.15
#define OVERLAP_EXPOSED 0.5
#define LATENCY 0.7e-6 /* s: a load's round trip to HBM under load (Little's law below) */
/* a product whose loop has the threads fill its shared tiles (an operand
   computed on the way in: no bulk copy, no prefetch by the pipeline, the
   warps stall on their own loads) runs at this fraction of its rate when
   every tile is so filled, in proportion to the bytes filled when some
   are: a guess from rmsnorm_matmul_16k, whose
   fused kernel with a g-scaled operand ran 2.43 ms on the H200 where
   cuBLAS ran the product alone in 0.79 (2026-12-03-h200-session4) */
#define THREAD_FILL_EFF 0.5

static const Gpu gpus[GPU_COUNT] = {
#define X(id, nm, sms_, bw_, tc_, fp_, sfu_, ghz, smem_, regs_, thr, l2_, launch_, hbm_) \
  [GPU_##id] = {nm, sms_, bw_ * 1e12, tc_ * 1e12, fp_ * 1e12, (double)(sfu_) * (sms_) * (ghz) * 1e9, (smem_) * 1024, regs_, thr, (l2_) * 1048576.0, (launch_) * 1e-6, (hbm_) * 1e9},
#include "gpus.def"
#undef X
};

const Gpu *gpu_get(GpuId id) { return &gpus[id]; }

const Gpu *gpu_find(const char *name) {
  for (int i = 0; i < GPU_COUNT; i++)
    if (!strcmp(gpus[i].name, name)) return &gpus[i];
  return NULL;
}


typedef struct Acc {
  const TileProgram *tp;
  const Kernel *k;
  double *gload;          /* per global: elements loaded (per block) */
  double tc, fp, sfu;     /* per block */
  double mults;           /* current trip multiplier */
  double tile_area;       /* largest gemm tile (M * N) */
  double filled;          /* of the shared tiles a product's loop writes, the fraction (bytes) the threads compute */
  double region;          /* bytes the statements of the current loop body (or the top level) load */
  double flight;          /* bytes a block keeps in flight: the largest region, a loop's times its stages */
  struct Trips *trips;
} Acc;

static void count_expr(Acc *a, const SExpr *e, double elems) {
  if (!e) return;
  switch (e->kind) {
  case SX_INT:
  case SX_REAL:
  case SX_VAR: return;
  case SX_LOAD:
    if (e->buf->id >= 0 && e->buf->id < a->tp->globals.len) a->gload[e->buf->id] += elems * a->mults;
    a->region += elems * dtype_bytes(e->buf->dtype);
    for (int i = 0; i < e->nidx; i++) count_expr(a, e->idx[i], elems);
    return;
  case SX_TILE:
    for (int i = 0; i < e->nidx; i++) count_expr(a, e->idx[i], elems);
    return;
  case SX_IDX:
    count_expr(a, e->a[0], elems);
    count_expr(a, e->a[1], elems);
    return;
  case SX_OP:
    switch (e->op) {
    case OP_EXP:
    case OP_LOG:
    case OP_TANH:
    case OP_ERF:
    case OP_SIGMOID:
    case OP_RSQRT:
    case OP_SQRT:
    case OP_POW: a->sfu += elems * a->mults; break;
    default: a->fp += elems * a->mults; break;
    }
    for (int i = 0; i < e->n && i < 3; i++) count_expr(a, e->a[i], elems);
    return;
  }
}

static double buf_elems(const TBuf *b) {
  double n = 1;
  for (int d = 0; d < b->shape.rank; d++) n *= (double)b->shape.d[d].n;
  return n;
}

static void count_list(Acc *a, const StmtList *l);

/* tile_loop_trips_mean once per loop of a kernel (the loads and the stores both ask) */
typedef struct Trips { const Stmt *loop[64]; double t[64]; int n; } Trips;
static double trips_of(Trips *c, const Kernel *k, const Stmt *lp) {
  for (int i = 0; i < c->n; i++)
    if (c->loop[i] == lp) return c->t[i];
  double t = tile_loop_trips_mean(k, lp);
  if (c->n < 64) c->loop[c->n] = lp, c->t[c->n++] = t;
  return t;
}

static void count_stmt(Acc *a, const Stmt *s) {
  switch (s->kind) {
  case ST_FILL: return;
  case ST_MAP: {
    double n = buf_elems(s->dst);
    count_expr(a, s->value, n);
    count_expr(a, s->other, 0);
    return;
  }
  case ST_GEMM: {
    double m = (double)s->dst->shape.d[0].n, nn = (double)s->dst->shape.d[1].n;
    double kk = (double)s->a->shape.d[s->trans_a ? 0 : 1].n;
    a->tc += 2 * m * nn * kk * a->mults;
    if (m * nn > a->tile_area) a->tile_area = m * nn;
    return;
  }
  case ST_REDUCE: a->fp += buf_elems(s->a) * a->mults; return;
  case ST_STORE:
  case ST_ATOMIC_ADD: {
    double n = (double)s->ext[0] * (double)s->ext[1];
    count_expr(a, s->value, n); /* (its bytes: count_stores) */
    return;
  }
  case ST_LOOP: {
    double t = trips_of(a->trips, a->k, s), saved = a->mults, outer = a->region;
    a->mults *= t;
    a->region = 0;
    count_list(a, &s->body);
    if (tile_list_has(&s->body, ST_GEMM)) {
      double copy, fill;
      tile_shared_writes(&s->body, NULL, &copy, &fill);
      if (fill > 0) a->filled = fmax(a->filled, fill / (fill + copy));
    }
    /* a pipelined loop keeps `stages` trips in flight; a serial one about
       as many as the compiler unrolls (independent loads of 4 trips) */
    a->flight = fmax(a->flight, a->region * (s->stages > 1 ? s->stages : fmin(fmax(t, 1), 4)));
    a->mults = saved;
    a->region = outer;
    return;
  }
  case ST_IF: { /* the costlier branch */
    count_list(a, s->body.len >= s->orelse.len ? &s->body : &s->orelse);
    return;
  }
  }
}

static void count_list(Acc *a, const StmtList *l) {
  for (int i = 0; i < l->len; i++) count_stmt(a, l->data[i]);
}

typedef struct Stores { const TileProgram *tp; const Kernel *k; double *gstore; double mults; struct Trips *trips; } Stores;

static void count_stores(Stores *st, const StmtList *l) {
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->kind == ST_STORE || s->kind == ST_ATOMIC_ADD) {
      st->gstore[s->global->id] += (double)s->ext[0] * (double)s->ext[1] * st->mults;
    } else if (s->kind == ST_LOOP) {
      double saved = st->mults;
      st->mults *= trips_of(st->trips, st->k, s);
      count_stores(st, &s->body);
      st->mults = saved;
    } else if (s->kind == ST_IF) {
      count_stores(st, s->body.len >= s->orelse.len ? &s->body : &s->orelse);
    }
  }
}

/* Where each tile buffer is written: the deepest pipeline of the loops
   around its writes (0: none), and whether a write is inside a loop and
   whether one is outside all loops. */
typedef struct Written {
  const Kernel *k;
  int *stages;          /* per buffer */
  bool *in_loop, *outside;
  bool *mapped;         /* computed element by element (a map of an op), not loaded */
  int cur;
} Written;
static void note_write(Written *w, const TBuf *t, int depth, bool map) {
  for (int b = 0; b < w->k->bufs.len; b++)
    if (w->k->bufs.data[b] == t) {
      if (w->cur > w->stages[b]) w->stages[b] = w->cur;
      if (depth > 0) w->in_loop[b] = true;
      else w->outside[b] = true;
      if (map) w->mapped[b] = true;
    }
}
static void written_in(Written *w, const StmtList *l, int depth) {
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (s->dst) note_write(w, s->dst, depth, s->kind == ST_MAP && s->value && s->value->kind == SX_OP);
    if (s->kind == ST_LOOP) {
      int saved = w->cur;
      if (s->stages > w->cur) w->cur = s->stages;
      written_in(w, &s->body, depth + 1);
      w->cur = saved;
    } else if (s->kind == ST_IF) {
      written_in(w, &s->body, depth);
      written_in(w, &s->orelse, depth);
    }
  }
}

/* Triton's shared memory for a block: its products' operands, one product
   at a time (a tile it computes lives in registers between products), each
   operand loaded as it is (times the loop's stages: Triton pipelines bare
   loads into shared memory) and each computed by a map of ops twice (built
   in registers, then converted to the product's operand layout through a
   scratch buffer of its size).  Measured on the H200: the transformer LM's
   backward kernel with two computed 64 KiB whole-K operands asked for
   256 KiB; lm_small's SwiGLU kernel, two products of computed operands of
   32 + 64 KiB, fit. */
typedef struct Gemms {
  const Kernel *k;
  const int *stages;
  const bool *mapped;
  double most, store;
} Gemms;
static double operand_bytes(const Gemms *g, const TBuf *t) {
  for (int b = 0; b < g->k->bufs.len && b < 256; b++)
    if (g->k->bufs.data[b] == t) {
      double bytes = buf_elems(t) * dtype_bytes(t->dtype);
      return g->mapped[b] ? 2 * bytes : bytes * (g->stages[b] > 1 ? g->stages[b] : 1);
    }
  return 0;
}
static bool gemm_shared(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Gemms *g = ud;
  if (s->kind == ST_GEMM) {
    double need = operand_bytes(g, s->a) + operand_bytes(g, s->b);
    if (need > g->most) g->most = need;
  }
  /* a kernel whose schedule asks for descriptors (copy=1) stores an
     unmasked 2-D block by TMA, staged whole through shared memory beside
     the operands' stages: split-K's 128 x 256 float32 partial asked for
     278,552 bytes on the H200 (3 x 48 KiB of operands, 128 KiB of tile) */
  if (s->kind == ST_STORE && g->k->copy == 1 && !stmt_masked(s) && s->ngidx >= 2) {
    double bytes = (double)s->ext[0] * (double)s->ext[1] * dtype_bytes(s->global->dtype);
    if (bytes > g->store) g->store = bytes;
  }
  return true;
}

/* Shared memory and registers (per thread) of a block.  A shared tile
   written in a pipelined loop has a buffer per stage; the tiles of all
   loops count (TileLang 0.1.15 does not reuse one loop's TMA buffers in
   the next: swiglu_mlp_8k's two product loops asked for 288 KiB on the
   H200).  *triton: what Triton asks for instead (gemm_shared).  Registers: the
   fragments that outlive a loop trip (states, tiles written outside
   loops) are all live at once; of those written inside a loop, the
   element-wise chain of one trip, about the two largest at a time. */
static void block_resources(const Kernel *k, double *smem, double *triton, double *regs) {
  *smem = *triton = 0;
  *regs = 0;
  int n = k->bufs.len;
  int stages[256] = {0};
  bool in_loop[256] = {0}, outside[256] = {0}, mapped[256] = {0};
  Written w = {k, stages, in_loop, outside, mapped, 0};
  if (n <= 256) written_in(&w, &k->body, 0);
  double big1 = 0, big2 = 0;
  for (int b = 0; b < n; b++) {
    const TBuf *t = k->bufs.data[b];
    double bytes = buf_elems(t) * dtype_bytes(t->dtype);
    int st = b < 256 && stages[b] > 1 ? stages[b] : 1;
    if (t->scope == SCOPE_SHARED) {
      *smem += bytes * st;
    } else if (b < 256 && in_loop[b] && !outside[b]) {
      double e = buf_elems(t);
      if (e > big1) big2 = big1, big1 = e;
      else if (e > big2) big2 = e;
    } else {
      *regs += buf_elems(t);
    }
  }
  *regs = (*regs + big1 + big2) / (k->threads > 0 ? k->threads : 128) + 32;
  Gemms gm = {k, stages, mapped, 0, 0};
  tile_walk(&k->body, gemm_shared, &gm);
  *triton = gm.most + gm.store;
}

/* tensor-core efficiency by tile area (TileLang's textbook GEMM on the H200) */
static double tile_eff(double area) {
  if (area <= 0) return 0.5;
  double e = 0.11 + (log2(area) - 12) * 0.21;
  return e < 0.08 ? 0.08 : e > 0.63 ? 0.63 : e;
}

void cost_kernel(const TileProgram *tp, const Kernel *k, const Gpu *gpu, KernelCost *out) {
  memset(out, 0, sizeof *out);
  int ng = tp->globals.len;
  /* per global: elements loaded and stored by one block (every global:
     a program of a deep model's backward has hundreds) */
  double *gload = calloc((size_t)(2 * ng + 2), sizeof(double)), *gstore = gload + ng + 1;
  Trips trips = {.n = 0};
  Acc a = {.tp = tp, .k = k, .gload = gload, .mults = 1, .trips = &trips};
  count_list(&a, &k->body);
  a.flight = fmax(a.flight, a.region);
  Stores st = {tp, k, gstore, 1, &trips};
  count_stores(&st, &k->body);
  double blocks = (double)k->grid[0] * (double)k->grid[1] * (double)k->grid[2];
  out->blocks = blocks;
  for (int g = 0; g < ng; g++) {
    const TBuf *b = tp->globals.data[g];
    double size = 1;
    for (int d = 0; d < b->shape.rank; d++) size *= (double)b->shape.d[d].n;
    double eb = dtype_bytes(b->dtype);
    double ld = gload[g] * blocks * eb, sd = gstore[g] * blocks * eb;
    out->loads += ld;
    out->stores += sd;
    /* footprint: what is touched, at most the tensor (a gather touches less) */
    double touched = 0;
    if (ld > 0) touched += fmin(ld, size * eb);
    if (sd > 0) touched += fmin(sd, size * eb);
    out->footprint += touched;
  }
  free(gload);
  double extra = out->loads + out->stores - out->footprint;
  out->hbm = out->footprint + (extra > 0 ? extra : 0) * MISS_RATE;
  out->tc_flops = a.tc * blocks;
  out->fp_flops = a.fp * blocks;
  out->sfu_ops = a.sfu * blocks;
  double smem, triton, regs;
  block_resources(k, &smem, &triton, &regs);
  out->smem = smem;
  int thr = k->threads > 0 ? k->threads : 128;
  double per = 32;
  if (smem > 0) per = fmin(per, floor(gpu->smem / smem));
  /* a block may have an SM's shared memory but 1 KiB; of that, a quarter
     is left for what the targets add to the tiles counted here (TileLang
     asked 288 KiB for swiglu_mlp_8k's 192 KiB of pipelined tiles) */
  if (smem > 0.75 * (gpu->smem - 1024)) per = 0;
  /* and what Triton asks for, all of it (plans are the targets' both) */
  if (triton > gpu->smem - 1024) per = 0;
  per = fmin(per, floor((double)gpu->threads / thr));
  per = fmin(per, floor((double)gpu->regs / (fmin(regs, 255) * thr)));
  double spill = regs > 255 ? regs / 255.0 : 1; /* spilled registers: slower */
  /* far beyond the register file: the compiler spills whole tiles to
     local memory (or gives up); not a kernel worth pricing */
  if (regs > 2 * 255) per = 0;
  if (per < 1) {
    /* does not fit on an SM: unusable */
    out->per_sm = 0;
    out->seconds = INFINITY;
    return;
  }
  out->per_sm = (int)per;
  double slots = gpu->sms * per, fill = fmin(1, blocks / gpu->sms);
  double waves = ceil(blocks / slots), tail = blocks >= slots ? (blocks / slots) / waves : 1;
  out->waves_eff = tail * fill;
  /* Little's law: an SM moves at most the bytes its resident blocks keep
     in flight per round trip (a block of 256 threads loading 768 bytes,
     eight to an SM, reached 0.3 of the copy rate on the H200:
     bias_gelu_residual, 2026-12-03) */
  double active = fmin(gpu->sms, blocks), resident = fmin(per, blocks / fmax(active, 1));
  double sm_rate = resident * a.flight / LATENCY;
  double rate = fmin(gpu->bw * MEM_EFF * fmin(1, 2 * fill), active * sm_rate);
  out->mem_s = out->hbm / (rate > 0 ? rate : gpu->bw * MEM_EFF);
  /* tensor-core products run asynchronously to the CUDA cores and SFUs
     (wgmma; other warps): half of the smaller of the two is exposed (a
     guess until the calibration run measures it) */
  double tc_s = out->tc_flops / (gpu->tc * TC_EFF * tile_eff(a.tile_area) * (1 - (1 - THREAD_FILL_EFF) * a.filled));
  double cu_s = out->fp_flops / gpu->fp + out->sfu_ops / gpu->sfu;
  out->compute_s = (fmax(tc_s, cu_s) + OVERLAP_EXPOSED * fmin(tc_s, cu_s)) / fill * spill;
  /* a memory-bound kernel of many waves loses little to its last one: its
     blocks share the bandwidth the idle slots leave them */
  double mem_tail = waves > 4 ? 1 : tail;
  out->seconds = fmax(out->mem_s / mem_tail, out->compute_s / tail) + gpu->launch;
  /* a compute-bound block stores its tile after its main loop: the store
     overlaps only the other resident blocks' work, so about 1/per_sm of
     the stores' time is exposed (a temporary written by a product is not
     free) */
  if (out->compute_s > out->mem_s)
    out->seconds += out->stores / (gpu->bw * MEM_EFF) / per;
}

double cost_program(const TileProgram *tp, const Gpu *gpu, KernelCost *out) {
  double t = 0;
  for (int k = 0; k < tp->kernels.len; k++) {
    KernelCost c;
    cost_kernel(tp, tp->kernels.data[k], gpu, &c);
    if (out) out[k] = c;
    t += c.seconds;
  }
  return t;
}

double cost_floor(const Graph *g, DType dt, const Gpu *gpu, double *flops, double *bytes) {
  double f = 0, b = 0, eb = dtype_bytes(dt);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (n->op == OP_MATMUL) {
      const Shape *a = &n->in[0]->shape;
      f += 2 * (double)shape_numel(&n->shape) * (double)a->d[a->rank - 1].n;
    }
  }
  for (int i = 0; i < g->ninputs; i++)
    b += (double)shape_numel(&g->inputs[i]->shape) * (g->inputs[i]->kind == EK_REAL ? eb : 8);
  b += (double)shape_numel(&g->output->shape) * eb;
  if (flops) *flops = f;
  if (bytes) *bytes = b;
  return fmax(f / (gpu->tc * TC_EFF), b / (gpu->bw * MEM_EFF));
}
