/*
 * defer.c: a loop's reductions that nothing in the loop reads, taken out
 * of it.
 *
 * A reduction accumulating a tile into a row state every trip of a loop
 * (FlashNorm's sum of squares in the product's K loop: `reduce sum S +=
 * E over j` with E = x * x) costs a cross-thread reduction a trip: shuffles
 * and, over several warps, a barrier, beside the product's tensor-core
 * work.  Where no statement of the loop reads the state, the monoid lets
 * the reduction wait: the tile itself accumulates element-wise, trip after
 * trip (E[i, j] := E[i, j] (+) value, from the monoid's identity), and one
 * reduction after the loop folds its columns into the state.  The same
 * elements combine, in another order (the monoid is associative and
 * commutative), so the program's value is the same up to rounding; the
 * verifier checks the result as it checks any plan.
 *
 * The tile then lives across trips: its elements a thread holds stay in
 * registers, so the move is made only for a tile of at most TILE_DEFER_REGS
 * elements a thread, whose row state the loop neither reads nor writes
 * but by the reduction.  A float32 fragment that one unconditional map of
 * the loop's body writes and only the reduction reads accumulates itself
 * (its map combines); any other tile (a loaded shared tile, a 16-bit one,
 * one read elsewhere) gets a float32 fragment of its own, D<n>, that a map
 * in the reduction's place combines it into.  A block whose loop runs no
 * trip folds the identity, which leaves its state as it was.
 *
 * RMSNorm -> product at M = 16384, K = N = 4096 on an H100 (bench/exp/s16,
 * medians over CUDA-graph replays, three rounds): 1.24-1.28 ms as emitted
 * before (a reduction a trip, whose annotated row layout made the loads
 * element-wise), 1.05-1.10 with bulk copies and a reduction a trip,
 * 1.00-1.03 deferred.
 */
#include "tile.h"

/* the map of loop's body that writes t, or NULL */
static Stmt *writer(const Stmt *loop, const TBuf *t) {
  for (int i = 0; i < loop->body.len; i++) {
    Stmt *s = loop->body.data[i];
    if (s->kind == ST_MAP && s->dst == t) return s;
  }
  return NULL;
}

static SExpr *combined(Arena *a, const Monoid *m, TBuf *t, SExpr *v) {
  SExpr *args[2] = {sx_tile(a, t, sx_var(a, TV_I), sx_var(a, TV_J)), v};
  return sx_op(a, m->combine, EK_REAL, args, 2);
}

/* loop's reduction r deferred if it can be: r moves after the loop (the
   loop's place in list, *at, advances by the fill put before it), and the
   loop accumulates r's tile element-wise instead */
static bool defer_one(Kernel *k, Arena *a, StmtList *list, int *at, int ri) {
  Stmt *loop = list->data[*at], *r = loop->body.data[ri];
  TBuf *t = r->a;
  const Monoid *m = op_monoid(r->reduce_op);
  if (r->clear || !m || t->shape.rank != 2) return false;
  if (t->shape.d[0].n * t->shape.d[1].n > (int64_t)TILE_DEFER_REGS * k->threads) return false;
  int sreads, swrites, treads, twrites;
  tile_buf_uses(&loop->body, r->dst, &sreads, &swrites);
  if (sreads != 0 || swrites != 1) return false;
  Stmt *w = writer(loop, t);
  tile_buf_uses(&k->body, t, &treads, &twrites);
  bool own = t->scope == SCOPE_FRAGMENT && t->dtype == DT_F32 && w && twrites == 1 && treads == 1;
  for (int i = 0; own && i < loop->body.len && loop->body.data[i] != w; i++)
    if (loop->body.data[i] == r) own = false; /* read before it is written: not a tile of this trip */
  TBuf *acc = t;
  if (own) {
    w->value = combined(a, m, t, w->value);
    if (w->mask) w->other = combined(a, m, t, w->other);
    for (int i = ri; i + 1 < loop->body.len; i++) loop->body.data[i] = loop->body.data[i + 1];
    loop->body.len--;
  } else {
    acc = arena_alloc(a, sizeof *acc);
    *acc = (TBuf){.id = k->bufs.len, .name = arena_printf(a, "D%d", k->bufs.len), .scope = SCOPE_FRAGMENT,
                  .dtype = DT_F32, .shape = t->shape};
    vec_push(a, &k->bufs, acc);
    Stmt *fold = arena_alloc(a, sizeof *fold); /* in r's place */
    *fold = (Stmt){.kind = ST_MAP, .dst = acc,
                   .value = combined(a, m, acc, sx_tile(a, t, sx_var(a, TV_I), sx_var(a, TV_J)))};
    loop->body.data[ri] = fold;
    r->a = acc;
  }
  Stmt *f = arena_alloc(a, sizeof *f);
  *f = (Stmt){.kind = ST_FILL, .dst = acc, .value = sx_real(a, m->identity)};
  vec_push(a, list, NULL);
  vec_push(a, list, NULL);
  for (int i = list->len - 1; i > *at + 1; i--) list->data[i] = list->data[i - 2];
  r->deferred = true;
  list->data[*at + 2] = r;    /* after the loop */
  list->data[*at + 1] = loop;
  list->data[*at] = f;        /* before it */
  *at += 1;
  return true;
}

static void defer_list(Kernel *k, Arena *a, StmtList *l) {
  for (int i = 0; i < l->len; i++) {
    Stmt *s = l->data[i];
    if (s->kind == ST_IF) {
      defer_list(k, a, &s->body);
      defer_list(k, a, &s->orelse);
    }
    if (s->kind != ST_LOOP) continue;
    defer_list(k, a, &s->body);
    for (int j = 0; j < s->body.len; j++)
      if (s->body.data[j]->kind == ST_REDUCE && defer_one(k, a, l, &i, j)) j--;
  }
}

void tile_defer_reductions(Kernel *k, Arena *a) { defer_list(k, a, &k->body); }
