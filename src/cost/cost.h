/*
 * cost.h: the analytic, IO-aware cost model.
 *
 * A kernel's cost is read off its tile program (what will be emitted, not a
 * guess about it): walking its statements with every loop's trip count
 * (averaged over the blocks, so a causal kernel's triangle counts once)
 * gives, per block, the elements it loads from and stores to each global
 * tensor, the tensor-core FLOPs of its gemms, the CUDA-core FLOPs of its
 * maps and reductions and the special-function calls (exp, log, tanh, erf,
 * rsqrt, sigmoid) of its expressions; its tile buffers give shared memory
 * and registers, hence blocks per SM.  Then, per GPU profile:
 *
 *   HBM bytes   every tensor once (its footprint), plus the loads beyond
 *               the footprint (a tile re-read by other blocks) at the rate
 *               they miss in L2;
 *   time        max(bytes / bandwidth, tensor-core time + CUDA-core time)
 *               stretched by wave quantization (blocks / (SMs x blocks per
 *               SM), rounded up) and by an under-filled grid, plus the
 *               launch overhead; the tensor-core rate is derated by tile
 *               size (a 64x64 tile cannot feed Hopper's tensor cores).
 *
 * The floor of a program is max(FLOPs / peak, (inputs + output) / bandwidth).
 */
#ifndef TS_COST_H
#define TS_COST_H

#include "../tile/tile.h"

typedef enum {
#define X(id, name, sms, bw, tc, fp, sfu, ghz, smem, regs, thr, l2, launch, hbm) GPU_##id,
#include "gpus.def"
#undef X
  GPU_COUNT
} GpuId;

typedef struct Gpu {
  const char *name;
  int sms;
  double bw;          /* bytes/s */
  double tc;          /* tensor-core FLOP/s */
  double fp;          /* fp32 FLOP/s */
  double sfu;         /* special-function ops/s (whole GPU) */
  int smem;           /* shared memory bytes per SM */
  int regs;           /* 32-bit registers per SM */
  int threads;        /* max threads per SM */
  double l2;          /* bytes */
  double launch;      /* seconds per kernel launch */
  double hbm;         /* bytes of device memory */
} Gpu;

const Gpu *gpu_get(GpuId id);
/* By name ("a100", "h100", "h200"); NULL if unknown. */
const Gpu *gpu_find(const char *name);

typedef struct KernelCost {
  double loads, stores;   /* bytes moved by the kernel's loads and stores (no cache) */
  double footprint;       /* bytes of the distinct tensors it reads and writes */
  double hbm;             /* modelled HBM bytes */
  double tc_flops, fp_flops, sfu_ops;
  double blocks;
  int per_sm;             /* blocks resident per SM */
  double smem;            /* shared memory bytes per block */
  double mem_s, compute_s, waves_eff, seconds;
} KernelCost;

/* The cost of kernel k of tp on gpu. */
void cost_kernel(const TileProgram *tp, const Kernel *k, const Gpu *gpu, KernelCost *out);
/* The whole program: the sum over its kernels (per kernel in out, may be NULL). */
double cost_program(const TileProgram *tp, const Gpu *gpu, KernelCost *out);
/* The roofline floor of the graph's computation at storage type dt. */
double cost_floor(const Graph *g, DType dt, const Gpu *gpu, double *flops, double *bytes);

#endif
