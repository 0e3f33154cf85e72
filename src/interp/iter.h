/*
 * iter.h: the strided iterator of the float64 interpreter (interp.c) and
 * its error bounds (bound.c): NumPy broadcasting written once.
 *
 * Iter walks an output shape row-major and keeps one element offset per
 * operand, with stride 0 on broadcast dimensions (binary ops, compare,
 * select, gather, matmul batch dimensions) or the strides of a permutation.
 * Private to src/interp.
 */
#ifndef TS_INTERP_ITER_H
#define TS_INTERP_ITER_H

#include <string.h>

#include "../ir/ir.h"

/* Row-major element strides of s. */
static inline void row_strides(const Shape *s, int64_t st[TS_MAX_RANK]) {
  int64_t acc = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->d[i].n;
  }
}

/* Product of the dimensions [from, to) of s. */
static inline int64_t dims_prod(const Shape *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= s->d[i].n;
  return p;
}

/* ---- the strided iterator ---- */

#define ITER_MAXOPS 4

/* Walks an output shape row-major; off[k] is operand k's element offset. */
typedef struct Iter {
  int rank;
  int64_t dim[TS_MAX_RANK];
  int64_t idx[TS_MAX_RANK];
  int64_t st[ITER_MAXOPS][TS_MAX_RANK];
  int64_t off[ITER_MAXOPS];
} Iter;

static inline void iter_init(Iter *it, const Shape *out) {
  memset(it, 0, sizeof *it);
  it->rank = out->rank;
  for (int i = 0; i < out->rank; i++) it->dim[i] = out->d[i].n;
}

/* Operand k has shape s, right-aligned against the output (NumPy rules);
   its elements are `unit` doubles apart (1, or a matrix size for matmul). */
static inline void iter_bcast(Iter *it, int k, const Shape *s, int64_t unit) {
  int64_t st[TS_MAX_RANK];
  row_strides(s, st);
  int shift = it->rank - s->rank;
  for (int i = 0; i < it->rank; i++) {
    int j = i - shift;
    it->st[k][i] = (j < 0 || s->d[j].n == 1) ? 0 : st[j] * unit;
  }
}

/* Advance the index over dimensions from..0 (odometer order). */
static inline void iter_step(Iter *it, int nops, int from) {
  for (int d = from; d >= 0; d--) {
    for (int k = 0; k < nops; k++) it->off[k] += it->st[k][d];
    if (++it->idx[d] < it->dim[d]) return;
    for (int k = 0; k < nops; k++) it->off[k] -= it->st[k][d] * it->dim[d];
    it->idx[d] = 0;
  }
}

/* One element on. */
static inline void iter_next(Iter *it, int nops) { iter_step(it, nops, it->rank - 1); }

/* Kernels walk rows: the caller loops over the innermost dimension (length
   iter_len, operand k's stride iter_inner) and then moves one row on. */
static inline void iter_next_row(Iter *it, int nops) { iter_step(it, nops, it->rank - 2); }
static inline int64_t iter_len(const Iter *it) { return it->rank ? it->dim[it->rank - 1] : 1; }

/* To the start of row `row` (rows counted row-major over all but the last
   dimension), from anywhere: a thread's first row of a split walk. */
static inline void iter_seek_row(Iter *it, int nops, int64_t row) {
  for (int k = 0; k < nops; k++) it->off[k] = 0;
  if (it->rank) it->idx[it->rank - 1] = 0;
  for (int d = it->rank - 2; d >= 0; d--) {
    it->idx[d] = row % it->dim[d];
    row /= it->dim[d];
    for (int k = 0; k < nops; k++) it->off[k] += it->idx[d] * it->st[k][d];
  }
}
static inline int64_t iter_inner(const Iter *it, int k) {
  return it->rank ? it->st[k][it->rank - 1] : 0;
}

#endif
