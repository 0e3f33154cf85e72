/*
 * tprint.c: walking, printing and checking tile programs.
 *
 * tile_walk and stmt_exprs are the one walk over the statement tree that
 * every stage uses (the interpreter, verify, the emitters, the printer and
 * the checker below).  The printed form reads like the TileLang it
 * becomes: one block per kernel with its grid, buffers and statements,
 * each expression written out with the block ids bx, by, bz, the tile
 * coordinates i, j and the loop variables k, k1, k2.  The checker verifies
 * what every emitter and the tile interpreter rely on: buffers belong to
 * their kernel, loads and stores index every dimension, tiles of a gemm
 * agree, statements use only the variables in scope (a loop variable only
 * inside its loop, loop bounds and conditions only block ids and outer
 * loop variables), and grids stay within CUDA's limits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tile.h"

const char *tvar_name(TVar v) {
  switch (v) {
  case TV_BX: return "bx";
  case TV_BY: return "by";
  case TV_BZ: return "bz";
  case TV_I: return "i";
  case TV_J: return "j";
  case TV_K: return "k";
  case TV_K1: return "k1";
  case TV_K2: return "k2";
  }
  return "?";
}

/* ---- the walk ---- */

static bool walk(const StmtList *l, int depth, StmtVisit fn, void *ud) {
  for (int i = 0; i < l->len; i++) {
    const Stmt *s = l->data[i];
    if (!fn(s, depth, ud)) return false;
    if (s->kind == ST_LOOP && !walk(&s->body, depth + 1, fn, ud)) return false;
    if (s->kind == ST_IF && (!walk(&s->body, depth, fn, ud) || !walk(&s->orelse, depth, fn, ud))) return false;
  }
  return true;
}

bool tile_walk(const StmtList *l, StmtVisit fn, void *ud) { return walk(l, 0, fn, ud); }

void stmt_exprs(const Stmt *s, ExprVisit fn, void *ud) {
  const SExpr *own[] = {s->value, s->mask, s->other, s->lo, s->hi, s->cond};
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (own[i]) fn(own[i], ud);
  for (int i = 0; i < s->ngidx; i++)
    if (s->gidx[i]) fn(s->gidx[i], ud);
}

void sexpr_walk(const SExpr *e, ExprVisit fn, void *ud) {
  if (!e) return;
  fn(e, ud);
  for (int i = 0; i < e->nidx; i++) sexpr_walk(e->idx[i], fn, ud);
  for (int i = 0; i < e->n && i < 3; i++) sexpr_walk(e->a[i], fn, ud);
}

typedef struct VarUse { TVar v; bool hit; } VarUse;

static void var_use(const SExpr *e, void *ud) {
  VarUse *u = ud;
  if (e->kind == SX_VAR && e->var == u->v) u->hit = true;
}

static void var_use_tree(const SExpr *e, void *ud) { sexpr_walk(e, var_use, ud); }

bool sexpr_uses_var(const SExpr *e, TVar v) {
  VarUse u = {v, false};
  sexpr_walk(e, var_use, &u);
  return u.hit;
}

bool stmt_uses_var(const Stmt *s, TVar v) {
  VarUse u = {v, false};
  stmt_exprs(s, var_use_tree, &u);
  return u.hit;
}

typedef struct KindFind { StmtKind kind; bool hit; } KindFind;

static bool find_kind(const Stmt *s, int depth, void *ud) {
  (void)depth;
  KindFind *f = ud;
  f->hit |= s->kind == f->kind;
  return !f->hit;
}

bool tile_list_has(const StmtList *l, StmtKind kind) {
  KindFind f = {kind, false};
  tile_walk(l, find_kind, &f);
  return f.hit;
}

bool kernel_has(const Kernel *k, StmtKind kind) { return tile_list_has(&k->body, kind); }

typedef struct Uses { const TBuf *b; int reads, writes; } Uses;

static void use_read(const SExpr *e, void *ud) {
  Uses *u = ud;
  if (e->kind == SX_TILE && e->buf == u->b) u->reads++;
}

static void use_reads(const SExpr *e, void *ud) { sexpr_walk(e, use_read, ud); }

static bool use_stmt(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Uses *u = ud;
  stmt_exprs(s, use_reads, u);
  if ((s->kind == ST_GEMM && (s->a == u->b || s->b == u->b)) || (s->kind == ST_REDUCE && s->a == u->b)) u->reads++;
  if ((s->kind == ST_FILL || s->kind == ST_MAP || s->kind == ST_GEMM || s->kind == ST_REDUCE) && s->dst == u->b)
    u->writes++;
  return true;
}

void tile_buf_uses(const StmtList *l, const TBuf *b, int *reads, int *writes) {
  Uses u = {b, 0, 0};
  tile_walk(l, use_stmt, &u);
  if (reads) *reads = u.reads;
  if (writes) *writes = u.writes;
}

bool stmt_masked(const Stmt *s) { return s->mask && !(s->mask->kind == SX_INT && s->mask->i); }

bool tile_map_is_copy(const Stmt *s) {
  const SExpr *v = s->value;
  return s->kind == ST_MAP && s->dst->scope == SCOPE_SHARED && v && v->kind == SX_LOAD &&
         v->buf->scope == SCOPE_GLOBAL && v->buf->dtype == s->dst->dtype && !stmt_masked(s);
}

typedef struct Fills { bool (*is_copy)(const Stmt *s); double copy, fill; } Fills;

static bool shared_write(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Fills *f = ud;
  if (s->kind == ST_MAP && s->dst->scope == SCOPE_SHARED) {
    double b = (double)shape_numel(&s->dst->shape) * dtype_bytes(s->dst->dtype);
    if (f->is_copy(s)) f->copy += b;
    else f->fill += b;
  }
  return true;
}

void tile_shared_writes(const StmtList *l, bool (*is_copy)(const Stmt *s), double *copy_bytes, double *fill_bytes) {
  Fills f = {is_copy ? is_copy : tile_map_is_copy, 0, 0};
  tile_walk(l, shared_write, &f);
  *copy_bytes = f.copy, *fill_bytes = f.fill;
}

bool tile_thread_fills(const StmtList *l, bool (*is_copy)(const Stmt *s)) {
  double copy, fill;
  tile_shared_writes(l, is_copy, &copy, &fill);
  return fill > 0;
}

const char *ix_spelling(IdxOp op) {
  switch (op) {
  case IX_ADD: return "+";
  case IX_SUB: return "-";
  case IX_MUL: return "*";
  case IX_DIV: return "//";
  case IX_MOD: return "%";
  case IX_MIN: return "min";
  case IX_MAX: return "max";
  case IX_LT: return "<";
  case IX_AND: return "and";
  }
  return "?";
}

void sexpr_print(FILE *out, const SExpr *e) {
  char buf[40];
  switch (e->kind) {
  case SX_INT: fprintf(out, "%lld", (long long)e->i); return;
  case SX_REAL:
    if (isinf(e->f)) fputs(e->f > 0 ? "inf" : "-inf", out);
    else if (isnan(e->f)) fputs("nan", out);
    else fputs(fmt_double(buf, sizeof buf, e->f), out);
    return;
  case SX_VAR: fputs(tvar_name(e->var), out); return;
  case SX_IDX:
    if (e->iop == IX_MIN || e->iop == IX_MAX) {
      fprintf(out, "%s(", ix_spelling(e->iop));
      sexpr_print(out, e->a[0]);
      fputs(", ", out);
      sexpr_print(out, e->a[1]);
      fputc(')', out);
    } else {
      fputc('(', out);
      sexpr_print(out, e->a[0]);
      fprintf(out, " %s ", ix_spelling(e->iop));
      sexpr_print(out, e->a[1]);
      fputc(')', out);
    }
    return;
  case SX_LOAD:
  case SX_TILE:
    fprintf(out, "%s[", e->buf->name);
    for (int i = 0; i < e->nidx; i++) {
      if (i) fputs(", ", out);
      sexpr_print(out, e->idx[i]);
    }
    fputc(']', out);
    return;
  case SX_OP:
    fprintf(out, "%s(", op_info[e->op].name);
    for (int i = 0; i < e->n; i++) {
      if (i) fputs(", ", out);
      sexpr_print(out, e->a[i]);
    }
    fputc(')', out);
    return;
  }
}

static const char *scope_name(Scope s) {
  switch (s) {
  case SCOPE_GLOBAL: return "global";
  case SCOPE_SHARED: return "shared";
  case SCOPE_FRAGMENT: return "fragment";
  }
  return "?";
}

static void print_shape(FILE *out, const Shape *s) {
  fputc('[', out);
  for (int i = 0; i < s->rank; i++) fprintf(out, "%s%lld", i ? ", " : "", (long long)s->d[i].n);
  fputc(']', out);
}

static void print_list(FILE *out, const StmtList *l, int ind);

static void print_stmt(FILE *out, const Stmt *s, int ind) {
  fprintf(out, "%*s", 2 * ind, "");
  switch (s->kind) {
  case ST_FILL:
    fprintf(out, "fill %s = ", s->dst->name);
    sexpr_print(out, s->value);
    break;
  case ST_MAP:
    fprintf(out, "map %s[i%s] = ", s->dst->name, s->dst->shape.rank == 2 ? ", j" : "");
    if (s->mask) {
      sexpr_print(out, s->mask);
      fputs(" ? ", out);
    }
    sexpr_print(out, s->value);
    if (s->mask) {
      fputs(" : ", out);
      sexpr_print(out, s->other);
    }
    break;
  case ST_GEMM:
    fprintf(out, "gemm %s += %s%s ⬝ %s%s", s->dst->name, s->a->name, s->trans_a ? "ᵀ" : "", s->b->name,
            s->trans_b ? "ᵀ" : "");
    break;
  case ST_REDUCE:
    fprintf(out, "reduce %s %s= %s over j", op_info[s->reduce_op].name, s->dst->name, s->a->name);
    if (s->clear) fputs(" (clear)", out);
    if (s->deferred) fputs(" (deferred: accumulated element-wise in the loop above)", out);
    break;
  case ST_STORE:
  case ST_ATOMIC_ADD:
    fprintf(out, "%s over [%lld, %lld]: ", s->kind == ST_STORE ? "store" : "atomic_add", (long long)s->ext[0],
            (long long)s->ext[1]);
    if (s->mask) {
      fputs("if ", out);
      sexpr_print(out, s->mask);
      fputs(": ", out);
    }
    fprintf(out, "%s[", s->global->name);
    for (int i = 0; i < s->ngidx; i++) {
      if (i) fputs(", ", out);
      sexpr_print(out, s->gidx[i]);
    }
    fputs(s->kind == ST_STORE ? "] = " : "] += ", out);
    sexpr_print(out, s->value);
    break;
  case ST_LOOP:
    fprintf(out, "for %s in %s(", tvar_name(s->var), s->stages ? "pipelined" : "serial");
    if (!(s->lo->kind == SX_INT && s->lo->i == 0)) {
      sexpr_print(out, s->lo);
      fputs(", ", out);
    }
    sexpr_print(out, s->hi);
    if (s->stages) fprintf(out, ", stages=%d", s->stages);
    fputs("):\n", out);
    print_list(out, &s->body, ind + 1);
    return;
  case ST_IF:
    fputs("if ", out);
    sexpr_print(out, s->cond);
    fputs(":\n", out);
    print_list(out, &s->body, ind + 1);
    if (s->orelse.len) {
      fprintf(out, "%*selse:\n", 2 * ind, "");
      print_list(out, &s->orelse, ind + 1);
    }
    return;
  }
  fputc('\n', out);
}

static void print_list(FILE *out, const StmtList *l, int ind) {
  for (int i = 0; i < l->len; i++) print_stmt(out, l->data[i], ind);
}

const char *tile_role_name(GlobalRole r) {
  switch (r) {
  case GB_INPUT: return "input";
  case GB_OUTPUT: return "output";
  case GB_TEMP: return "temp";
  case GB_SCRATCH: return "scratch";
  }
  return "?";
}

void tile_json_globals(Json *j, const TileProgram *tp) {
  json_begin_arr(j);
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *b = tp->globals.data[i];
    json_begin_obj(j);
    json_kstr(j, "name", b->name);
    json_key(j, "shape");
    json_begin_arr(j);
    for (int d = 0; d < b->shape.rank; d++) json_int(j, b->shape.d[d].n);
    json_end_arr(j);
    json_kstr(j, "dtype", dtype_name(b->dtype));
    json_kstr(j, "role", tile_role_name(b->role));
    /* an input's name in the Lean source (name is the program's, unique:
       k_1 where k is taken) */
    if (b->role == GB_INPUT && b->node && b->node->op == OP_INPUT) json_kstr(j, "lean_name", b->node->name);
    if (b->role == GB_SCRATCH) json_knum(j, "init", b->init);
    json_end_obj(j);
  }
  json_end_arr(j);
}

void tile_print_json(FILE *out, const TileProgram *tp) {
  Json j = {.f = out, .pretty = true};
  json_begin_obj(&j);
  json_kstr(&j, "entry", tp->g->entry ? tp->g->entry : "main");
  json_kstr(&j, "dtype", dtype_name(tp->dtype));
  json_key(&j, "global_buffers");
  tile_json_globals(&j, tp);
  json_key(&j, "kernels");
  json_begin_arr(&j);
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *K = tp->kernels.data[k];
    json_begin_obj(&j);
    json_kstr(&j, "name", K->name);
    json_key(&j, "grid");
    json_begin_arr(&j);
    for (int d = 0; d < 3; d++) json_int(&j, K->grid[d]);
    json_end_arr(&j);
    json_kint(&j, "threads", K->threads);
    json_key(&j, "node");
    if (K->node) json_int(&j, K->node->id);
    else json_null(&j);
    json_key(&j, "buffers");
    json_begin_arr(&j);
    for (int i = 0; i < K->bufs.len; i++) {
      const TBuf *b = K->bufs.data[i];
      json_begin_obj(&j);
      json_kstr(&j, "name", b->name);
      json_kstr(&j, "scope", scope_name(b->scope));
      json_kstr(&j, "dtype", dtype_name(b->dtype));
      json_key(&j, "shape");
      json_begin_arr(&j);
      for (int d = 0; d < b->shape.rank; d++) json_int(&j, b->shape.d[d].n);
      json_end_arr(&j);
      json_end_obj(&j);
    }
    json_end_arr(&j);
    /* the statements as the text printer writes them, one line each (nesting by indentation) */
    json_key(&j, "body");
    json_begin_arr(&j);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
      print_list(m, &K->body, 0);
      fclose(m);
      for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        json_str(&j, line);
        if (!nl) break;
      }
      free(text);
    }
    json_end_arr(&j);
    json_end_obj(&j);
  }
  json_end_arr(&j);
  json_end_obj(&j);
  fputc('\n', out);
}

void tile_print(FILE *out, const TileProgram *tp) {
  char shape[512];
  fprintf(out, "tiles %s (storage %s, accumulation float32)\n", tp->g->entry ? tp->g->entry : "main",
          dtype_name(tp->dtype));
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *b = tp->globals.data[i];
    const char *role = tile_role_name(b->role);
    fprintf(out, "  %-6s %s : %s%s", role, b->name, dtype_name(b->dtype), shape_str(&b->shape, shape, sizeof shape));
    if (b->role == GB_SCRATCH) {
      char v[40];
      fprintf(out, " = %s", isinf(b->init) ? (b->init > 0 ? "inf" : "-inf") : fmt_double(v, sizeof v, b->init));
    }
    fputc('\n', out);
  }
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *K = tp->kernels.data[k];
    fprintf(out, "\nkernel %s grid [%lld, %lld, %lld] threads %d%s\n", K->name, (long long)K->grid[0],
            (long long)K->grid[1], (long long)K->grid[2], K->threads,
            K->copy == 1 ? " (bulk copies)" : K->copy == 2 ? " (element-wise loads)" : "");
    if (K->node && K->node->site.file)
      fprintf(out, "  -- computes %%%d (%s) from %s:%u\n", K->node->id, op_info[K->node->op].name,
              K->node->site.file->name, K->node->site.line);
    for (int i = 0; i < K->bufs.len; i++) {
      const TBuf *b = K->bufs.data[i];
      fprintf(out, "  %s %s : %s", scope_name(b->scope), b->name, dtype_name(b->dtype));
      print_shape(out, &b->shape);
      fputc('\n', out);
    }
    print_list(out, &K->body, 1);
  }
}

/* ---- checker ---- */

typedef struct Chk {
  const TileProgram *tp;
  const Kernel *k;
  FILE *err;
  int depth;            /* loop variables k .. tv_loop(depth - 1) are in scope */
  bool has_ij;          /* tile coordinates i, j are in scope */
} Chk;

static bool bad(Chk *c, const char *what) {
  if (c->err) fprintf(c->err, "tile invariant violated in %s: %s\n", c->k ? c->k->name : "program", what);
  return false;
}

static bool owns(const Kernel *k, const TBuf *b) {
  for (int i = 0; i < k->bufs.len; i++)
    if (k->bufs.data[i] == b) return true;
  return false;
}

static bool is_global(const TileProgram *tp, const TBuf *b) {
  for (int i = 0; i < tp->globals.len; i++)
    if (tp->globals.data[i] == b) return true;
  return false;
}

static bool check_expr(Chk *c, const SExpr *e) {
  switch (e->kind) {
  case SX_INT:
  case SX_REAL: return true;
  case SX_VAR:
    if (e->var >= TV_K && e->var >= tv_loop(c->depth)) return bad(c, "a loop variable used outside its loop");
    if ((e->var == TV_I || e->var == TV_J) && !c->has_ij) return bad(c, "i or j used outside a tile loop");
    return true;
  case SX_IDX: return check_expr(c, e->a[0]) && check_expr(c, e->a[1]);
  case SX_LOAD:
    if (!is_global(c->tp, e->buf)) return bad(c, "load from a buffer that is not a global tensor");
    if (e->nidx != e->buf->shape.rank) return bad(c, "load does not index every dimension");
    for (int i = 0; i < e->nidx; i++)
      if (!check_expr(c, e->idx[i])) return false;
    return true;
  case SX_TILE:
    if (!owns(c->k, e->buf)) return bad(c, "read of a tile buffer of another kernel");
    if (e->nidx != e->buf->shape.rank) return bad(c, "tile read does not index every axis");
    for (int i = 0; i < e->nidx; i++)
      if (!check_expr(c, e->idx[i])) return false;
    return true;
  case SX_OP:
    if (e->n != op_info[e->op].arity) return bad(c, "elementwise op with the wrong number of operands");
    for (int i = 0; i < e->n; i++)
      if (!e->a[i] || !check_expr(c, e->a[i])) return false;
    return true;
  }
  return bad(c, "unknown expression");
}

/* A block-uniform expression: integer arithmetic over block ids and the
   loop variables in scope, no tile coordinates, no loads. */
static bool uniform(Chk *c, const SExpr *e) {
  switch (e->kind) {
  case SX_INT: return true;
  case SX_REAL:
  case SX_LOAD:
  case SX_TILE:
  case SX_OP: return false;
  case SX_VAR: return e->var != TV_I && e->var != TV_J && (e->var < TV_K || e->var < tv_loop(c->depth));
  case SX_IDX: return uniform(c, e->a[0]) && uniform(c, e->a[1]);
  }
  return false;
}

static bool check_list(Chk *c, const StmtList *l);

static bool tile_shape_ok(const TBuf *b) { return b->shape.rank == 1 || b->shape.rank == 2; }

static bool check_stmt(Chk *c, const Stmt *s) {
  c->has_ij = false;
  switch (s->kind) {
  case ST_FILL:
    return (owns(c->k, s->dst) || bad(c, "fill of a foreign buffer")) && check_expr(c, s->value);
  case ST_MAP:
    c->has_ij = true;
    if (!owns(c->k, s->dst)) return bad(c, "map into a foreign buffer");
    if (s->mask && (!s->other || !check_expr(c, s->mask) || !check_expr(c, s->other)))
      return bad(c, "masked map without a valid mask and other value");
    return check_expr(c, s->value);
  case ST_GEMM: {
    if (!owns(c->k, s->a) || !owns(c->k, s->b) || !owns(c->k, s->dst)) return bad(c, "gemm of foreign buffers");
    const Shape *a = &s->a->shape, *b = &s->b->shape, *d = &s->dst->shape;
    if (a->rank != 2 || b->rank != 2 || d->rank != 2) return bad(c, "gemm of tiles that are not matrices");
    int64_t m = a->d[s->trans_a ? 1 : 0].n, ka = a->d[s->trans_a ? 0 : 1].n;
    int64_t kb = b->d[s->trans_b ? 1 : 0].n, n = b->d[s->trans_b ? 0 : 1].n;
    if (ka != kb || d->d[0].n != m || d->d[1].n != n) return bad(c, "gemm tile shapes do not agree");
    return true;
  }
  case ST_REDUCE:
    if (!owns(c->k, s->a) || !owns(c->k, s->dst)) return bad(c, "reduce of foreign buffers");
    if (s->a->shape.rank != 2 || s->dst->shape.rank != 1 || s->a->shape.d[0].n != s->dst->shape.d[0].n)
      return bad(c, "reduce tile shapes do not agree");
    return (op_monoid(s->reduce_op) && s->reduce_op != OP_MATMUL) || bad(c, "reduce with an op that is not a monoid");
  case ST_STORE:
  case ST_ATOMIC_ADD:
    c->has_ij = true;
    if (!is_global(c->tp, s->global)) return bad(c, "store to a buffer that is not global");
    if (s->ngidx != s->global->shape.rank) return bad(c, "store does not index every dimension");
    for (int i = 0; i < s->ngidx; i++)
      if (!check_expr(c, s->gidx[i])) return false;
    return (!s->mask || check_expr(c, s->mask)) && check_expr(c, s->value);
  case ST_LOOP: {
    if (c->depth >= TILE_MAX_LOOP_DEPTH) return bad(c, "loops nested too deep");
    if (s->var != tv_loop(c->depth)) return bad(c, "a loop whose variable is not the one of its depth");
    if (!s->lo || !s->hi || !uniform(c, s->lo) || !uniform(c, s->hi))
      return bad(c, "loop bounds that are not block-uniform index expressions");
    if (s->stages < 0) return bad(c, "negative pipeline depth");
    c->depth++;
    bool ok = check_list(c, &s->body);
    c->depth--;
    return ok;
  }
  case ST_IF:
    if (!s->cond || !uniform(c, s->cond)) return bad(c, "an if whose condition is not block-uniform");
    return check_list(c, &s->body) && check_list(c, &s->orelse);
  }
  return bad(c, "unknown statement");
}

static bool check_list(Chk *c, const StmtList *l) {
  for (int i = 0; i < l->len; i++)
    if (!l->data[i] || !check_stmt(c, l->data[i])) return false;
  return true;
}

bool tile_check(const TileProgram *tp, FILE *err) {
  Chk c = {.tp = tp, .err = err};
  for (int k = 0; k < tp->kernels.len; k++) {
    c.k = tp->kernels.data[k];
    for (int d = 0; d < 3; d++)
      if (c.k->grid[d] < 1) return bad(&c, "empty grid");
    /* CUDA: at most 2^31 - 1 blocks along x, 65535 along y and z */
    if (c.k->grid[0] > 2147483647 || c.k->grid[1] > 65535 || c.k->grid[2] > 65535)
      return bad(&c, "a grid beyond CUDA's limits (x < 2^31, y and z <= 65535)");
    if (c.k->threads < 1) return bad(&c, "no threads");
    for (int b = 0; b < c.k->bufs.len; b++)
      if (!tile_shape_ok(c.k->bufs.data[b])) return bad(&c, "a tile buffer of rank other than 1 or 2");
    c.depth = 0;
    if (!check_list(&c, &c.k->body)) return false;
  }
  return true;
}
