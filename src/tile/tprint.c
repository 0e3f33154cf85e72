/*
 * tprint.c: printing and checking tile programs.
 *
 * The printed form reads like the TileLang it becomes: one block per kernel
 * with its grid, buffers and statements, each expression written out with
 * the block ids bx, by, bz, the tile coordinates i, j and the loop index k.
 * The checker verifies what every emitter and the tile interpreter rely on:
 * buffers belong to their kernel, loads and stores index every dimension,
 * tiles of a gemm agree, statements use only the variables in scope.
 */
#include <math.h>
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
  }
  return "?";
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

static void print_stmt(FILE *out, const Stmt *s, const char *ind) {
  switch (s->kind) {
  case ST_FILL:
    fprintf(out, "%sfill %s = ", ind, s->dst->name);
    sexpr_print(out, s->value);
    break;
  case ST_MAP:
    fprintf(out, "%smap %s[i%s] = ", ind, s->dst->name, s->dst->shape.rank == 2 ? ", j" : "");
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
  case ST_GEMM: fprintf(out, "%sgemm %s += %s ⬝ %s", ind, s->dst->name, s->a->name, s->b->name); break;
  case ST_REDUCE:
    fprintf(out, "%sreduce %s %s= %s over j", ind, op_info[s->reduce_op].name, s->dst->name, s->a->name);
    if (s->clear) fputs(" (clear)", out);
    break;
  case ST_STORE:
  case ST_ATOMIC_ADD:
    fprintf(out, "%s%s over [%lld, %lld]: ", ind, s->kind == ST_STORE ? "store" : "atomic_add",
            (long long)s->ext[0], (long long)s->ext[1]);
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
  }
  fputc('\n', out);
}

static void print_list(FILE *out, const StmtList *l, const char *ind) {
  for (int i = 0; i < l->len; i++) print_stmt(out, l->data[i], ind);
}

void tile_print(FILE *out, const TileProgram *tp) {
  char shape[512];
  fprintf(out, "tiles %s (storage %s, accumulation float32)\n", tp->g->entry ? tp->g->entry : "main",
          dtype_name(tp->dtype));
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *b = tp->globals.data[i];
    const char *role = b->role == GB_INPUT ? "input" : b->role == GB_OUTPUT ? "output" : "temp";
    fprintf(out, "  %-6s %s : %s%s\n", role, b->name, dtype_name(b->dtype),
            shape_str(&b->shape, shape, sizeof shape));
  }
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *K = tp->kernels.data[k];
    fprintf(out, "\nkernel %s grid [%lld, %lld, %lld] threads %d\n", K->name, (long long)K->grid[0],
            (long long)K->grid[1], (long long)K->grid[2], K->threads);
    if (K->node && K->node->site.file)
      fprintf(out, "  -- computes %%%d (%s) from %s:%u\n", K->node->id, op_info[K->node->op].name,
              K->node->site.file->name, K->node->site.line);
    for (int i = 0; i < K->bufs.len; i++) {
      const TBuf *b = K->bufs.data[i];
      fprintf(out, "  %s %s : %s", scope_name(b->scope), b->name, dtype_name(b->dtype));
      print_shape(out, &b->shape);
      fputc('\n', out);
    }
    print_list(out, &K->pre, "  ");
    if (K->loop) {
      fprintf(out, "  for k in pipelined(%lld, stages=%d):\n", (long long)K->loop, K->stages);
      print_list(out, &K->body, "    ");
    }
    print_list(out, &K->post, "  ");
  }
}

/* ---- checker ---- */

typedef struct Chk {
  const TileProgram *tp;
  const Kernel *k;
  FILE *err;
  bool in_loop, has_ij;
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
    if (e->var == TV_K && !c->in_loop) return bad(c, "k used outside the loop");
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
    const Shape *a = &s->a->shape, *b = &s->b->shape, *d = &s->dst->shape;
    if (!owns(c->k, s->a) || !owns(c->k, s->b) || !owns(c->k, s->dst)) return bad(c, "gemm of foreign buffers");
    if (a->rank != 2 || b->rank != 2 || d->rank != 2 || a->d[1].n != b->d[0].n || d->d[0].n != a->d[0].n ||
        d->d[1].n != b->d[1].n)
      return bad(c, "gemm tile shapes do not agree");
    return true;
  }
  case ST_REDUCE:
    if (!owns(c->k, s->a) || !owns(c->k, s->dst)) return bad(c, "reduce of foreign buffers");
    if (s->a->shape.rank != 2 || s->dst->shape.rank != 1 || s->a->shape.d[0].n != s->dst->shape.d[0].n)
      return bad(c, "reduce tile shapes do not agree");
    return s->reduce_op == OP_SUM || s->reduce_op == OP_AMAX || s->reduce_op == OP_AMIN ||
           bad(c, "reduce with an op that is not a monoid");
  case ST_STORE:
  case ST_ATOMIC_ADD:
    c->has_ij = true;
    if (!is_global(c->tp, s->global)) return bad(c, "store to a buffer that is not global");
    if (s->ngidx != s->global->shape.rank) return bad(c, "store does not index every dimension");
    for (int i = 0; i < s->ngidx; i++)
      if (!check_expr(c, s->gidx[i])) return false;
    return (!s->mask || check_expr(c, s->mask)) && check_expr(c, s->value);
  }
  return bad(c, "unknown statement");
}

bool tile_check(const TileProgram *tp, FILE *err) {
  Chk c = {.tp = tp, .err = err};
  for (int k = 0; k < tp->kernels.len; k++) {
    c.k = tp->kernels.data[k];
    for (int d = 0; d < 3; d++)
      if (c.k->grid[d] < 1) return bad(&c, "empty grid");
    if (c.k->threads < 1) return bad(&c, "no threads");
    c.in_loop = false;
    for (int i = 0; i < c.k->pre.len; i++)
      if (!check_stmt(&c, c.k->pre.data[i])) return false;
    c.in_loop = true;
    for (int i = 0; i < c.k->body.len; i++)
      if (!check_stmt(&c, c.k->body.data[i])) return false;
    if (c.k->body.len && !c.k->loop) return bad(&c, "a loop body but no loop");
    c.in_loop = false;
    for (int i = 0; i < c.k->post.len; i++)
      if (!check_stmt(&c, c.k->post.data[i])) return false;
  }
  return true;
}
