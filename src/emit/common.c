/*
 * common.c: what both emitters share: the module's header, run(), the
 * PyTorch reference derived from the graph, the __main__ check-and-time
 * harness, and the one walker that prints tile expressions as Python.
 *
 * The walker prints index arithmetic the same way for both targets (only
 * min, max and the boolean `and` are spelled per target); for elementwise
 * ops it expands the target's template (see emit.h); loads, tile reads and
 * constants are printed by the target.  The reference does not look at the
 * tile program at all: it walks the graph's nodes in order, one PyTorch
 * statement per node in float32 (int64 for indices), so a mistake of the
 * lowering shows up as a mismatch in __main__.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/interp.h"
#include "emit.h"

bool target_parse(const char *s, Target *t) {
  if (!strcmp(s, "tilelang")) *t = TARGET_TILELANG;
  else if (!strcmp(s, "triton")) *t = TARGET_TRITON;
  else return false;
  return true;
}

const char *target_name(Target t) {
  switch (t) {
  case TARGET_TILELANG: return "tilelang";
  case TARGET_TRITON: return "triton";
  }
  return "?";
}

void emit_printf(Emit *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(e->out, fmt, ap);
  va_end(ap);
}

void emit_fail(Emit *e, const char *fmt, ...) {
  if (e->failed) return; /* keep the first */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->err, sizeof e->err, fmt, ap);
  va_end(ap);
  e->failed = true;
}


const char *emit_torch_dtype(DType t) {
  switch (t) {
  case DT_F32: return "torch.float32";
  case DT_F16: return "torch.float16";
  case DT_BF16: return "torch.bfloat16";
  case DT_I32: return "torch.int32";
  case DT_I64: return "torch.int64";
  case DT_BOOL: return "torch.bool";
  }
  return "?";
}

bool emit_gemm_thin(const Stmt *s) {
  const Shape *a = &s->a->shape, *b = &s->b->shape;
  return a->d[0].n < 16 || a->d[1].n < 16 || b->d[0].n < 16 || b->d[1].n < 16;
}

typedef struct VarUse { bool i, j; } VarUse;
static void var_use(const SExpr *x, void *ud) {
  VarUse *u = ud;
  if (x->kind == SX_VAR) u->i |= x->var == TV_I, u->j |= x->var == TV_J;
}

/* x = off + v, v + off or v, with off free of i and j: *off (NULL for 0) */
static bool plus_var(const SExpr *x, TVar v, const SExpr **off) {
  VarUse u = {0};
  *off = NULL;
  if (x->kind == SX_VAR && x->var == v) return true;
  if (x->kind != SX_IDX || x->iop != IX_ADD) return false;
  for (int k = 0; k < 2; k++)
    if (x->a[k]->kind == SX_VAR && x->a[k]->var == v) {
      sexpr_walk(x->a[1 - k], var_use, &u);
      if (u.i || u.j) return false;
      *off = x->a[1 - k];
      return true;
    }
  return false;
}

bool emit_rect(SExpr *const *idx, int n, int *di, int *dj, const SExpr **oi, const SExpr **oj) {
  *di = *dj = -1;
  *oi = *oj = NULL;
  for (int d = 0; d < n; d++) {
    VarUse u = {0};
    sexpr_walk(idx[d], var_use, &u);
    if (u.i && u.j) return false;
    if (u.i) {
      if (*di >= 0 || !plus_var(idx[d], TV_I, oi)) return false;
      *di = d;
    } else if (u.j) {
      if (*dj >= 0 || !plus_var(idx[d], TV_J, oj)) return false;
      *dj = d;
    }
  }
  return *di >= 0 && *dj >= 0 && *di < *dj;
}

bool emit_is_real(DType t) {
  switch (t) {
  case DT_F32:
  case DT_F16:
  case DT_BF16: return true;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: return false;
  }
  return false;
}

/* ---- the expression walker ---- */

static void expand_template(Emit *e, const char *tpl, const SExpr *x) {
  for (const char *p = tpl; *p; p++) {
    if ((*p == '%' || *p == '$' || *p == '?') && p[1] >= '0' && p[1] <= '2') {
      int k = p[1] - '0';
      const SExpr *arg = k < x->n ? x->a[k] : NULL;
      if (!arg) {
        emit_fail(e, "internal: op %s lacks operand %d", op_info[x->op].name, k);
        return;
      }
      if (*p == '?') emit_cond(e, arg);
      else if (*p == '$' && (arg->kind == SX_INT || arg->kind == SX_REAL)) e->t->constant(e, arg, true);
      else emit_expr(e, arg);
      p++;
    } else {
      fputc(*p, e->out);
    }
  }
}

/* x as base * f for a constant factor f (x * c, c * x, x / c; else f = 1). */
static const SExpr *scaled(const SExpr *x, double *f) {
  *f = 1;
  if (x->kind != SX_OP || x->n != 2 || (x->op != OP_MUL && x->op != OP_DIV)) return x;
  for (int o = 0; o < 2; o++) {
    const SExpr *c = x->a[o], *y = x->a[1 - o];
    if (c->kind != SX_REAL || !isfinite(c->f) || c->f == 0 || (x->op == OP_DIV && o == 0)) continue;
    *f = x->op == OP_DIV ? 1 / c->f : c->f;
    return y;
  }
  return x;
}

/* exp(x) through the target's exp2 templates: exp(a·f) = exp2(a·(f·log2e))
   and exp(a·f − b·f) = exp2(a·(f·log2e) − b·(f·log2e)), one multiply or
   one fused multiply-add an element where the constant factor (a softmax
   temperature: the scores' 1/√D, moved by the rewrites to both sides of the
   max subtraction) would be a multiply of its own.  Folding f into log2e
   rounds the argument once where the program rounds it twice: within the
   exp2 path's tolerance (common.c's users check it, as they check exp2). */
static void emit_exp2(Emit *e, const SExpr *arg) {
  const double log2e = 1.4426950408889634;
  SExpr k = {.kind = SX_REAL, .ek = EK_REAL};
  SExpr t = {.kind = SX_OP, .ek = EK_REAL, .op = OP_SUB};
  double f = 1, fa = 1, fb = 1;
  if (arg->kind == SX_OP && arg->op == OP_SUB && arg->n == 2) {
    const SExpr *a = scaled(arg->a[0], &fa), *b = scaled(arg->a[1], &fb);
    if (fa == fb) t.a[0] = (SExpr *)a, t.a[1] = (SExpr *)b, f = fa;
    else t.a[0] = arg->a[0], t.a[1] = arg->a[1];
    k.f = f * log2e;
    t.a[2] = &k, t.n = 3;
    expand_template(e, e->t->exp_diff, &t);
    return;
  }
  t.a[0] = (SExpr *)scaled(arg, &f);
  k.f = f * log2e;
  t.a[1] = &k, t.n = 2;
  expand_template(e, e->t->exp_scaled, &t);
}

void emit_expr(Emit *e, const SExpr *x) {
  switch (x->kind) {
  case SX_INT:
  case SX_REAL: e->t->constant(e, x, false); return;
  case SX_VAR:
    if (e->t->var) e->t->var(e, x->var);
    else fputs(tvar_name(x->var), e->out);
    return;
  case SX_IDX: {
    if (x->iop == IX_AND) {
      fputc('(', e->out);
      emit_cond(e, x->a[0]);
      fprintf(e->out, " %s ", e->t->idx_and);
      emit_cond(e, x->a[1]);
      fputc(')', e->out);
    } else if (x->iop == IX_MIN || x->iop == IX_MAX) {
      fprintf(e->out, "%s(", x->iop == IX_MIN ? e->t->idx_min : e->t->idx_max);
      emit_expr(e, x->a[0]);
      fputs(", ", e->out);
      emit_expr(e, x->a[1]);
      fputc(')', e->out);
    } else { /* + - * // % <: the same infix spelling in Python for both targets */
      fputc('(', e->out);
      emit_expr(e, x->a[0]);
      fprintf(e->out, " %s ", ix_spelling(x->iop));
      emit_expr(e, x->a[1]);
      fputc(')', e->out);
    }
    return;
  }
  case SX_LOAD: e->t->load(e, x); return;
  case SX_TILE: e->t->tile(e, x); return;
  case SX_OP: {
    if (x->op == OP_EXP && e->t->exp_diff && x->n == 1) {
      emit_exp2(e, x->a[0]);
      return;
    }
    bool index_cast = x->op == OP_CAST && e->t->cast_index &&
                      (x->a[0]->kind == SX_VAR || x->a[0]->kind == SX_IDX || x->a[0]->kind == SX_INT);
    const char *tpl = x->op == OP_IDIV && x->n == 2 && x->a[1]->kind == SX_INT && x->a[1]->i > 0
                          ? e->t->idiv_pos
                          : index_cast ? e->t->cast_index : e->t->op_template(x->op, x->ek);
    if (!tpl) {
      emit_fail(e, "%s cannot express the op %s inside a kernel", e->t->name, op_info[x->op].name);
      fputs("None", e->out);
      return;
    }
    expand_template(e, tpl, x);
    return;
  }
  }
}

void emit_cond(Emit *e, const SExpr *x) {
  if (x->kind == SX_INT) fputs(x->i ? "True" : "False", e->out);
  else emit_expr(e, x);
}

/* ---- facts about kernels and statements ---- */

typedef struct Used { const TileProgram *tp; bool *used; } Used;

static void collect_load(const SExpr *x, void *ud) {
  Used *u = ud;
  const TileProgram *tp = u->tp;
  if (x->kind == SX_LOAD && x->buf->id >= 0 && x->buf->id < tp->globals.len && tp->globals.data[x->buf->id] == x->buf)
    u->used[x->buf->id] = true;
}

static void collect_loads(const SExpr *x, void *ud) { sexpr_walk(x, collect_load, ud); }

static bool collect_stmt(const Stmt *st, int depth, void *ud) {
  (void)depth;
  Used *u = ud;
  stmt_exprs(st, collect_loads, u);
  if (st->global) u->used[st->global->id] = true;
  return true;
}

int emit_kernel_globals(Emit *e, const Kernel *k, const TBuf ***out) {
  const TileProgram *tp = e->tp;
  size_t n_g = (size_t)(tp->globals.len ? tp->globals.len : 1);
  bool *used = arena_alloc(e->a, n_g * sizeof *used);
  const TBuf **res = arena_alloc(e->a, n_g * sizeof *res);
  Used u = {tp, used};
  tile_walk(&k->body, collect_stmt, &u);
  int n = 0;
  for (int g = 0; g < tp->globals.len; g++)
    if (used[g]) res[n++] = tp->globals.data[g];
  *out = res;
  return n;
}

static const char *site_of(Emit *e, const Node *n) {
  Pos p = n->site.file ? n->site : n->pos;
  if (!p.file) return arena_printf(e->a, "%%%d %s", n->id, op_info[n->op].name);
  return arena_printf(e->a, "%s:%u (%s)", p.file->name, p.line, op_info[n->op].name);
}

void emit_kernel_comment(Emit *e, const Kernel *k, const char *indent) {
  if (k->node) emit_printf(e, "%s# computes %%%d, %s\n", indent, k->node->id, site_of(e, k->node));
  if (k->covers.len) {
    emit_printf(e, "%s# implements:", indent);
    int col = 0;
    for (int i = 0; i < k->covers.len; i++) {
      const char *s = site_of(e, k->covers.data[i]);
      /* list each source line once */
      bool seen = false;
      for (int j = 0; j < i && !seen; j++) seen = !strcmp(site_of(e, k->covers.data[j]), s);
      if (seen) continue;
      if (col > 60) {
        emit_printf(e, "\n%s#  ", indent);
        col = 0;
      }
      emit_printf(e, " %s", s);
      col += (int)strlen(s) + 1;
    }
    emit_printf(e, "\n");
  }
}

static const char *shape_tuple(Emit *e, const Shape *s, bool rank0_as_1) {
  if (s->rank == 0) return rank0_as_1 ? "(1,)" : "()";
  char *buf = arena_alloc(e->a, 32 * (size_t)s->rank + 4);
  char *p = buf;
  *p++ = '(';
  for (int d = 0; d < s->rank; d++) p += sprintf(p, "%s%lld", d ? ", " : "", (long long)s->d[d].n);
  if (s->rank == 1) *p++ = ',';
  *p++ = ')';
  *p = 0;
  return buf;
}

const char *emit_shape_tuple(Emit *e, const TBuf *g) { return shape_tuple(e, &g->shape, true); }

/* A Python float literal. */
static const char *py_float(Emit *e, double v) {
  char buf[48];
  if (isnan(v)) return "float(\"nan\")";
  if (isinf(v)) return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  fmt_double(buf, sizeof buf, v);
  if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
  return arena_strdup(e->a, buf);
}

/* ---- the module ---- */

/* The environment variables that change what opt writes (the search's and
   the emitters' switches, read with getenv where they act): the header's
   command sets those that are set. */
static const char *const emit_env[] = {"TS_ONE_EXP", "TS_SHARED_X",  "TS_TL_COPY",  "TS_TL_STAGE_STORE",
                                       "TS_TL_SWIZZLE", "TS_TR_EXP2", "TS_TR_TMA",  "TS_UNSAFE"};

static void header(Emit *e) {
  const TileProgram *tp = e->tp;
  const EmitInfo *in = e->info;
  emit_printf(e, "# Generated by tilesmith (target: %s%s).  Do not edit: regenerate with\n#   ", e->t->name,
              e->t == &emit_tilelang ? ", sm_90a" : ", CUDA capability 9.0");
  for (size_t v = 0; v < sizeof emit_env / sizeof emit_env[0]; v++)
    if (getenv(emit_env[v])) emit_printf(e, "%s=%s ", emit_env[v], getenv(emit_env[v]));
  emit_printf(e, "tilesmith opt %s --entry %s%s%s --dtype %s%s --target %s -o FILE.py\n",
              in && in->file ? in->file : "FILE.lean", in && in->entry ? in->entry : tp->g->entry,
              in && in->sizes && *in->sizes ? " --size " : "", in && in->sizes ? in->sizes : "",
              dtype_name(tp->dtype), in && in->options ? in->options : "", e->t->name);
  emit_printf(e, "#\n# entry: %s\n# sizes: %s\n# storage dtype: %s (accumulation in float32)\n",
              in && in->entry ? in->entry : tp->g->entry ? tp->g->entry : "?",
              in && in->sizes && *in->sizes ? in->sizes : "(as declared)", dtype_name(tp->dtype));
  emit_printf(e, "# tensors:\n");
  char sh[512];
  for (int g = 0; g < tp->globals.len; g++) {
    const TBuf *b = tp->globals.data[g];
    const char *lean = b->role == GB_INPUT ? b->node->name : e->gname[g];
    emit_printf(e, "#   %-6s %s : %s%s", b->role == GB_INPUT ? "input" : b->role == GB_OUTPUT ? "output" : b->role == GB_SCRATCH ? "scratch" : "temp",
                lean, dtype_name(b->dtype), shape_str(&b->shape, sh, sizeof sh));
    if (strcmp(lean, e->gname[g])) emit_printf(e, "  (%s in the kernels)", e->gname[g]);
    emit_printf(e, "\n");
  }
  emit_printf(e, "# kernels (%d, launched in this order):\n", tp->kernels.len);
  for (int k = 0; k < tp->kernels.len; k++) {
    const Kernel *K = tp->kernels.data[k];
    emit_printf(e, "#   %s: grid (%lld, %lld, %lld)\n", K->name, (long long)K->grid[0], (long long)K->grid[1],
                (long long)K->grid[2]);
  }
  emit_printf(e, "#\n# run(...) computes the entry on the GPU from tensors exactly as compiled (its\n"
                 "# docstring says what it checks); reference(...) is plain PyTorch in float32;\n"
                 "# `python3 THIS.py` checks one against the other and times both.\n\n");
}

/* The inputs' names, comma-separated: run()'s parameters (pname) or the
   names inside the module (gname). */
static void input_names(Emit *e, bool inside) {
  const TileProgram *tp = e->tp;
  for (int i = 0; i < tp->g->ninputs; i++)
    emit_printf(e, "%s%s", i ? ", " : "", inside ? e->gname[tp->of_node[tp->g->inputs[i]->id]->id] : e->pname[i]);
}

/* The checks of run()'s and reference()'s arguments, written once: a table
   of what each argument must be and the helper that enforces it.  Devices
   are checked after everything else, of every argument, so that a machine
   without a GPU reaches every other check of every argument
   (tests/emit/check_run_args.py does), and only there is CUDA asked
   anything. */
static void check_fn(Emit *e) {
  const TileProgram *tp = e->tp;
  const Graph *g = tp->g;
  emit_printf(e, "# run()'s arguments in declaration order: (name in the Lean source, shape,\n"
                 "# dtype, why that dtype)\n%sARGS = (\n", e->pre);
  for (int i = 0; i < g->ninputs; i++) {
    const TBuf *b = tp->of_node[g->inputs[i]->id];
    emit_printf(e, "    (\"%s\", %s, %s, \"%s\"),\n", g->inputs[i]->name, shape_tuple(e, &b->shape, false),
                emit_torch_dtype(b->dtype),
                emit_is_real(b->dtype) ? "the storage dtype"
                : b->dtype == DT_I64   ? "Index tensors are int64; int32 is not accepted"
                                       : "a mask");
  }
  emit_printf(e, ")\n\n\n");
  emit_printf(e,
              "def %scheck(fn, args, strict=True, out=None):\n"
              "    \"\"\"args unchanged, once each is what this module was compiled for; else a\n"
              "    TypeError or ValueError from fn (\"run\" or \"reference\") naming the first bad\n"
              "    argument by its name in the Lean source.  Each argument must be a\n"
              "    torch.Tensor (TypeError) of exactly the compiled shape (ValueError); with\n"
              "    strict (run), also of exactly the dtype (TypeError), contiguous\n"
              "    (ValueError) and on the current CUDA device, where the kernels run\n"
              "    (ValueError).  out, when given (run()'s out=), must be all that with the\n"
              "    output's shape and dtype.  Devices are checked last, after everything\n"
              "    else of every argument.  Nothing is cast, copied or reshaped.\"\"\"\n"
              "    for (name, shape, dtype, why), x in zip(%sARGS, args):\n"
              "        arg = f\"{fn}(): argument '{name}'\"\n"
              "        if not isinstance(x, torch.Tensor):\n"
              "            raise TypeError(f\"{arg} must be a torch.Tensor, got {type(x).__name__}\")\n"
              "        if tuple(x.shape) != shape:\n"
              "            raise ValueError(f\"{arg} must have shape {shape}, got {tuple(x.shape)}\")\n"
              "        if strict and x.dtype != dtype:\n"
              "            raise TypeError(f\"{arg} must have dtype {dtype} ({why}), got {x.dtype}\")\n"
              "        if strict and not x.is_contiguous():\n"
              "            raise ValueError(f\"{arg} must be contiguous, got strides {x.stride()} (use .contiguous())\")\n"
              "    if out is not None:\n"
              "        arg, shape, dtype = f\"{fn}(): %s=\", %s, %s\n"
              "        if not isinstance(out, torch.Tensor):\n"
              "            raise TypeError(f\"{arg} must be a torch.Tensor, got {type(out).__name__}\")\n"
              "        if tuple(out.shape) != shape:\n"
              "            raise ValueError(f\"{arg} must have the output's shape {shape}, got {tuple(out.shape)}\")\n"
              "        if out.dtype != dtype:\n"
              "            raise TypeError(f\"{arg} must have the output's dtype {dtype}, got {out.dtype}\")\n"
              "        if not out.is_contiguous():\n"
              "            raise ValueError(f\"{arg} must be contiguous, got strides {out.stride()}\")\n"
              "    cur = None\n"
              "    for (name, _, _, _), x in zip(%sARGS, args if strict else ()):\n"
              "        if x.device.type != \"cuda\":\n"
              "            raise ValueError(f\"{fn}(): argument '{name}' must be on the current CUDA device, got {x.device}\")\n"
              "        if cur is None:\n"
              "            cur = torch.cuda.current_device()\n"
              "        if x.device.index != cur:\n"
              "            raise ValueError(f\"{fn}(): argument '{name}' must be on the current CUDA device cuda:{cur}, got {x.device}\")\n"
              "    if out is not None and (out.device.type != \"cuda\" or out.device.index != torch.cuda.current_device()):\n"
              "        raise ValueError(f\"{fn}(): %s= must be on the current CUDA device, got {out.device}\")\n"
              "    return args\n\n\n",
              e->pre, e->pre, e->outkw, shape_tuple(e, &tp->output->shape, false), emit_torch_dtype(tp->output->dtype),
              e->pre, e->outkw);
}

/* The body of fn (run or reference): check the arguments, then call the
   inside function, which takes them by the module's internal names; then
   the head of that function, whose body the caller writes. */
static void check_then_inside(Emit *e, const char *fn, bool strict) {
  bool out = strict; /* run() takes an output buffer */
  emit_printf(e, "    return %s%s(*%scheck(\"%s\", (", e->pre, fn, e->pre, fn);
  input_names(e, false);
  emit_printf(e, "%s)%s", e->tp->g->ninputs == 1 ? "," : "", strict ? "" : ", strict=False");
  if (out) emit_printf(e, ", out=%s), %s", e->outkw, e->outkw);
  else emit_printf(e, ")");
  emit_printf(e, ")\n\n\n");
  emit_printf(e, "def %s%s(", e->pre, fn);
  input_names(e, true);
  if (out) emit_printf(e, "%s%sout=None", e->tp->g->ninputs ? ", " : "", e->pre);
  emit_printf(e, "):\n    \"\"\"%s() once its arguments are checked, in the module's names for them.\"\"\"\n", fn);
}

static void run_fn(Emit *e) {
  const TileProgram *tp = e->tp;
  const Graph *g = tp->g;
  bool any_index = false, any_spelled = false;
  for (int i = 0; i < g->ninputs; i++) {
    any_index |= tp->of_node[g->inputs[i]->id]->dtype == DT_I64;
    any_spelled |= strcmp(e->pname[i], g->inputs[i]->name) != 0;
  }
  check_fn(e);
  emit_printf(e, "def run(");
  input_names(e, false);
  emit_printf(e, "%s*, %s=None", g->ninputs ? ", " : "", e->outkw);
  emit_printf(e, "):\n    \"\"\"%s on the GPU: returns the output in %s, shape %s.\n\n",
              g->entry ? g->entry : "The entry", dtype_name(tp->dtype), shape_tuple(e, &tp->output->shape, false));
  emit_printf(e, "    Takes the entry's tensor arguments in declaration order, each exactly as\n"
                 "    compiled: a contiguous torch.Tensor on the current CUDA device, of the\n"
                 "    shape and dtype below (the storage dtype, %s%s).\n"
                 "    Nothing is cast, copied or reshaped: anything else raises TypeError (not\n"
                 "    a tensor, wrong dtype) or ValueError (shape, layout, device) naming the\n"
                 "    argument as the Lean source does, before any kernel runs.\n\n",
              dtype_name(tp->dtype), any_index ? "; int64 for Index tensors,\n    int32 is not accepted" : "");
  for (int i = 0; i < g->ninputs; i++) {
    const TBuf *b = tp->of_node[g->inputs[i]->id];
    emit_printf(e, "        %s", e->pname[i]);
    if (strcmp(e->pname[i], g->inputs[i]->name)) emit_printf(e, " (%s in the Lean source)", g->inputs[i]->name);
    emit_printf(e, ": %s %s\n", dtype_name(b->dtype), shape_tuple(e, &b->shape, false));
  }
  if (any_spelled)
    emit_printf(e, "\n    A Lean name that is not a Python identifier is spelled in ASCII: ' ! ? as\n"
                   "    _prime _bang _qmark, subscripts as their digit or letter (W₁ as W1), Greek\n"
                   "    letters by name, other letters as _uXXXX; a Python keyword gains a _.\n");
  emit_printf(e, "\n    %s=: a contiguous tensor of the output's shape and dtype on the device,\n"
                 "    written in place and returned, instead of a new one.\n", e->outkw);
  emit_printf(e, "    \"\"\"\n");
  check_then_inside(e, "run", true);
  emit_printf(e, "    dev = torch.device(\"cuda\")\n");
  for (int i = 0; i < g->ninputs; i++) {
    const TBuf *b = tp->of_node[g->inputs[i]->id];
    if (b->shape.rank == 0) /* the kernels see a scalar as one element: a view */
      emit_printf(e, "    %s = %s.reshape(%s)\n", e->gname[b->id], e->gname[b->id], emit_shape_tuple(e, b));
  }
  for (int i = 0; i < tp->globals.len; i++) {
    const TBuf *b = tp->globals.data[i];
    if (b->role == GB_INPUT) continue;
    if (b->role == GB_SCRATCH && !isnan(b->init)) /* accumulators start at their value */
      emit_printf(e, "    %s = torch.full(%s, %s, dtype=%s, device=dev)\n", e->gname[i], emit_shape_tuple(e, b),
                  py_float(e, b->init), emit_torch_dtype(b->dtype));
    else if (b == tp->output) /* the caller's buffer, seen in the kernels' shape */
      emit_printf(e, "    %s = torch.empty(%s, dtype=%s, device=dev) if %sout is None else %sout.view(%s)\n",
                  e->gname[i], emit_shape_tuple(e, b), emit_torch_dtype(b->dtype), e->pre, e->pre,
                  emit_shape_tuple(e, b));
    else
      emit_printf(e, "    %s = torch.empty(%s, dtype=%s, device=dev)\n", e->gname[i], emit_shape_tuple(e, b),
                  emit_torch_dtype(b->dtype));
  }
  for (int k = 0; k < tp->kernels.len; k++) e->t->launch(e, tp->kernels.data[k]);
  emit_printf(e, "    return %s.reshape(%s) if %sout is None else %sout\n\n\n", e->gname[tp->output->id],
              shape_tuple(e, &tp->output->shape, false), e->pre, e->pre);
}

/* ---- torch.library ---- */

/* register(): run() as a PyTorch custom op (CUDA) with a fake
   implementation that gives the output's shape and dtype from nothing, so
   torch.compile traces through the op instead of breaking the graph and
   CUDA graphs capture its launches.  Explicit (not at import) and
   idempotent. */
const char *emit_op_name(Emit *e, const char *entry) {
  char *opname = arena_printf(e->a, "%s", entry);
  for (char *c = opname; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) *c = '_';
  return opname;
}

static void register_fn(Emit *e) {
  const TileProgram *tp = e->tp;
  const Graph *g = tp->g;
  const char *entry = g->entry ? g->entry : "entry";
  const char *opname = emit_op_name(e, entry);
  const char *shape = shape_tuple(e, &tp->output->shape, false), *dt = emit_torch_dtype(tp->output->dtype);
  emit_printf(e, "%sOPS = {}  # namespace -> the op this module registered there\n\n\n", e->pre);
  emit_printf(e,
              "def register(namespace=\"tilesmith\"):\n"
              "    \"\"\"Register run() as the custom op torch.ops.<namespace>.%s (CUDA), with a\n"
              "    fake implementation that checks the arguments' shapes and gives the\n"
              "    output's shape %s and dtype %s without computing: torch.compile traces\n"
              "    through the op and CUDA graphs capture its launches; and\n"
              "    torch.ops.<namespace>.%s_out, which writes the result into its last\n"
              "    argument (run()'s out=) and returns nothing.  Returns the op; calling it\n"
              "    again with the same namespace returns the same op.  A namespace where\n"
              "    another module (another target or other sizes of the entry) registered\n"
              "    %s is refused: give this one a namespace of its own.\"\"\"\n",
              opname, shape, dt, opname, opname);
  if (g->ninputs == 0) { /* torch.library needs a tensor argument to dispatch on */
    emit_printf(e, "    raise TypeError(\"register(): '%s' takes no tensors, and a PyTorch custom op dispatches on its "
                   "tensor arguments; call run() instead\")\n\n\n", entry);
    return;
  }
  emit_printf(e,
              "    if namespace in %sOPS:\n"
              "        return %sOPS[namespace]\n"
              "    if hasattr(getattr(torch.ops, namespace), \"%s\"):\n"
              "        raise RuntimeError(f\"register(): torch.ops.{namespace}.%s is registered already (by another module \"\n"
              "                           f\"of '%s'?); call register(namespace=...) with a namespace of its own\")\n\n"
              "    @torch.library.custom_op(f\"{namespace}::%s\", mutates_args=(), device_types=\"cuda\")\n"
              "    def op(",
              e->pre, e->pre, opname, opname, entry, opname);
  for (int i = 0; i < g->ninputs; i++) emit_printf(e, "%s%s: torch.Tensor", i ? ", " : "", e->pname[i]);
  emit_printf(e, ") -> torch.Tensor:\n        return %srun(*%scheck(\"%s\", (", e->pre, e->pre, opname);
  input_names(e, false);
  emit_printf(e, "%s)))\n\n", g->ninputs == 1 ? "," : "");
  emit_printf(e, "    @op.register_fake\n    def _(*args):\n");
  emit_printf(e, "        %scheck(\"%s\", args, strict=False)  # the shapes this module was compiled for\n", e->pre, opname);
  emit_printf(e, "        return args[0].new_empty(%s, dtype=%s)\n\n", shape, dt);
  /* the out= variant: writes a given buffer, returns nothing */
  emit_printf(e,
              "    @torch.library.custom_op(f\"{namespace}::%s_out\", mutates_args=(\"%s\",), device_types=\"cuda\")\n"
              "    def op_out(",
              opname, e->outkw);
  for (int i = 0; i < g->ninputs; i++) emit_printf(e, "%s: torch.Tensor, ", e->pname[i]);
  emit_printf(e, "%s: torch.Tensor) -> None:\n        %srun(*%scheck(\"%s_out\", (", e->outkw, e->pre, e->pre, opname);
  input_names(e, false);
  emit_printf(e, "%s), out=%s), %s)\n\n", g->ninputs == 1 ? "," : "", e->outkw, e->outkw);
  emit_printf(e, "    @op_out.register_fake\n    def _(*args):\n        %scheck(\"%s_out\", args[:-1], strict=False)\n"
                 "        return None\n\n", e->pre, opname);
  emit_printf(e, "    %sOPS[namespace] = op\n    return op\n\n\n", e->pre);
}

/* ---- the reference, from the graph ---- */

static const char *torch_op(Op op) {
  switch (op) {
  case OP_EXP: return "torch.exp";
  case OP_LOG: return "torch.log";
  case OP_SQRT: return "torch.sqrt";
  case OP_RSQRT: return "torch.rsqrt";
  case OP_TANH: return "torch.tanh";
  case OP_ERF: return "torch.erf";
  case OP_SIGMOID: return "torch.sigmoid";
  case OP_RELU: return "torch.relu";
  case OP_ABS: return "torch.abs";
  case OP_POW: return "torch.pow";
  case OP_MAX: return "torch.maximum";
  case OP_MIN: return "torch.minimum";
  case OP_LT: return "torch.lt";
  case OP_LE: return "torch.le";
  case OP_GT: return "torch.gt";
  case OP_GE: return "torch.ge";
  case OP_EQ: return "torch.eq";
  case OP_NE: return "torch.ne";
  case OP_SELECT: return "torch.where";
  case OP_SUM: return "torch.sum";
  case OP_AMAX: return "torch.amax";
  case OP_AMIN: return "torch.amin";
  case OP_MATMUL: return "torch.matmul";
  case OP_ADD: return "torch.add";
  case OP_SUB: return "torch.sub";
  case OP_MUL: return "torch.mul";
  case OP_DIV: return "torch.true_divide";
  case OP_IDIV: return NULL; /* ref_node writes it */
  case OP_NEG: return "torch.neg";
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
  case OP_CAST:
  case OP_PERMUTE:
  case OP_RESHAPE:
  case OP_SLICE:
  case OP_CONCAT:
  case OP_GATHER:
  case OP_COUNT: return NULL;
  }
  return NULL;
}

static void ref_node(Emit *e, const Node *n) {
  const TileProgram *tp = e->tp;
#define IN(k) n->in[k]->id
  emit_printf(e, "    v%d = ", n->id);
  switch (n->op) {
  case OP_INPUT:
    emit_printf(e, "%s.to(device=dev, dtype=%s).reshape(%s)", e->gname[tp->of_node[n->id]->id],
                n->kind == EK_REAL ? "ft" : n->kind == EK_INT ? "torch.int64" : "torch.bool",
                shape_tuple(e, &n->shape, false));
    break;
  case OP_CONST:
    if (n->kind == EK_INT) emit_printf(e, "torch.tensor(%lld, device=dev)", (long long)n->value);
    else emit_printf(e, "torch.tensor(%s, dtype=ft, device=dev)", py_float(e, n->value));
    break;
  case OP_IOTA: emit_printf(e, "torch.arange(%lld, device=dev)", (long long)n->shape.d[0].n); break;
  case OP_CAST: emit_printf(e, "v%d.to(ft)", IN(0)); break;
  case OP_PERMUTE:
    emit_printf(e, "v%d.permute(", IN(0));
    for (int d = 0; d < n->shape.rank; d++) emit_printf(e, "%s%d", d ? ", " : "", n->perm[d]);
    emit_printf(e, ")");
    break;
  case OP_RESHAPE: emit_printf(e, "v%d.reshape(%s)", IN(0), shape_tuple(e, &n->shape, false)); break;
  case OP_SLICE:
    emit_printf(e, "v%d.narrow(%d, %lld, %lld)", IN(0), n->axis, (long long)n->lo, (long long)(n->hi - n->lo));
    break;
  case OP_CONCAT:
    emit_printf(e, "torch.cat([");
    for (int k = 0; k < n->nin; k++) emit_printf(e, "%sv%d", k ? ", " : "", IN(k));
    emit_printf(e, "], dim=%d)", n->axis);
    break;
  case OP_GATHER: {
    /* broadcast x and the indices on the other axes, then torch.gather */
    const Node *x = n->in[0], *ix = n->in[1];
    Shape xs = n->shape, xr = x->shape, ir = ix->shape;
    xs.d[n->axis].n = x->shape.d[n->axis].n;
    /* align ranks (trailing) */
    xr.rank = ir.rank = n->shape.rank;
    for (int d = 0; d < n->shape.rank; d++) {
      int ox = d - (n->shape.rank - x->shape.rank), oi = d - (n->shape.rank - ix->shape.rank);
      xr.d[d].n = ox >= 0 ? x->shape.d[ox].n : 1;
      ir.d[d].n = oi >= 0 ? ix->shape.d[oi].n : 1;
    }
    emit_printf(e, "torch.gather(v%d.reshape(%s).expand(%s), %d, v%d.to(torch.int64).reshape(%s).expand(%s))", IN(0),
                shape_tuple(e, &xr, false), shape_tuple(e, &xs, false), n->axis, IN(1), shape_tuple(e, &ir, false),
                shape_tuple(e, &n->shape, false));
    break;
  }
  case OP_SUM:
  case OP_AMAX:
  case OP_AMIN: emit_printf(e, "%s(v%d, dim=%d, keepdim=True)", torch_op(n->op), IN(0), n->axis); break;
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
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
  case OP_DIV:
  case OP_POW:
  case OP_MAX:
  case OP_MIN:
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE:
  case OP_SELECT:
  case OP_MATMUL:
    emit_printf(e, "%s(", torch_op(n->op));
    for (int k = 0; k < n->nin; k++) emit_printf(e, "%sv%d", k ? ", " : "", IN(k));
    emit_printf(e, ")");
    break;
  case OP_IDIV: /* Lean's Int division: Euclidean, x / 0 = 0 */
    emit_printf(e, "torch.where(v%d == 0, 0, torch.div(v%d, torch.where(v%d == 0, 1, v%d), rounding_mode=\"floor\") + "
                   "((v%d < 0) & (torch.remainder(v%d, torch.where(v%d == 0, 1, v%d)) != 0)).long())",
                IN(1), IN(0), IN(1), IN(1), IN(1), IN(0), IN(1), IN(1));
    break;
  case OP_COUNT: emit_fail(e, "internal: OP_COUNT in a graph"); break;
  }
  emit_printf(e, "\n");
#undef IN
}

static void reference_fn(Emit *e) {
  const TileProgram *tp = e->tp;
  const Graph *g = tp->g;
  emit_printf(e, "def reference(");
  input_names(e, false);
  emit_printf(e, "):\n    \"\"\"The entry in plain PyTorch, float32 (float64 if a real argument is\n"
                 "    float64; int64 for indices), one statement per node of tilesmith's graph;\n"
                 "    returns that type, on the first argument's device.  Takes run()'s arguments\n"
                 "    by the same names, checked for type and shape only (any dtype, any device).\"\"\"\n");
  check_then_inside(e, "reference", false);
  if (g->ninputs) /* where the arguments are */
    emit_printf(e, "    dev = %s.device\n", e->gname[tp->of_node[g->inputs[0]->id]->id]);
  else
    emit_printf(e, "    dev = torch.device(\"cuda\") if torch.cuda.is_available() else torch.device(\"cpu\")\n");
  emit_printf(e, "    ft = torch.float64 if any(a.dtype == torch.float64 for a in (");
  input_names(e, true);
  emit_printf(e, "%s)) else torch.float32\n", g->ninputs == 1 ? "," : "");
  for (int i = 0; i < g->nnodes; i++) ref_node(e, g->nodes[i]);
  /* real results in ft; an Index result stays int64, a mask bool (as run()'s) */
  emit_printf(e, "    return v%d%s\n\n\n", g->output->id,
              g->output->kind == EK_REAL ? ".to(ft)" : g->output->kind == EK_INT ? ".to(torch.int64)" : "");
}

/* ---- __main__ ---- */

static bool has_gemm(const TileProgram *tp) {
  for (int k = 0; k < tp->kernels.len; k++)
    if (kernel_has(tp->kernels.data[k], ST_GEMM)) return true;
  return false;
}

static void main_fn(Emit *e) {
  const TileProgram *tp = e->tp;
  const Graph *g = tp->g;
  /* the program as written, when its inputs are the same (in order) */
  const Graph *src = e->info && e->info->source && e->info->source->ninputs == g->ninputs ? e->info->source : g;
  double rtol = 1e-4, atol = 1e-4;
  switch (tp->dtype) {
  case DT_BF16: rtol = atol = 2e-2; break;
  case DT_F16: rtol = atol = 2e-3; break;
  case DT_F32: rtol = atol = 1e-4; break;
  case DT_I32:
  case DT_I64:
  case DT_BOOL: break;
  }
  const char *note = NULL;
  if (tp->dtype == DT_F32 && e->t->f32_gemm_tolerance > 0 && has_gemm(tp)) {
    rtol = atol = e->t->f32_gemm_tolerance;
    note = e->t->f32_gemm_note;
  }
  emit_printf(e, "def random_inputs(seed=0):\n    \"\"\"Fresh inputs as run() takes them (contiguous, on the current CUDA device,\n"
                 "    in the storage dtype; int64 for Index tensors): normal(0, 1) for real\n"
                 "    tensors, normal(0, 1/fan_in) for weights feeding a matmul (as a network\n"
                 "    initializes them), uniform over the valid range for index tensors.\"\"\"\n");
  emit_printf(e, "    gen = torch.Generator(device=\"cuda\")\n    gen.manual_seed(seed)\n    return [\n");
  for (int i = 0; i < g->ninputs; i++) {
    const Node *in = g->inputs[i];
    const TBuf *b = tp->of_node[in->id];
    const char *shape = shape_tuple(e, &in->shape, false), *dt = emit_torch_dtype(b->dtype);
    long long fan_in = (long long)ir_fan_in(src, src->inputs[i]); /* 0 unless a real Param */
    if (emit_is_real(b->dtype) && fan_in > 0)
      emit_printf(e, "        (torch.randn(%s, generator=gen, device=\"cuda\") * %lld ** -0.5).to(%s),  # %s: fan-in %lld\n",
                  shape, fan_in, dt, in->name, fan_in);
    else if (emit_is_real(b->dtype))
      emit_printf(e, "        torch.randn(%s, generator=gen, device=\"cuda\").to(%s),  # %s\n", shape, dt, in->name);
    else if (b->dtype == DT_BOOL)
      emit_printf(e, "        torch.randint(0, 2, %s, generator=gen, device=\"cuda\").to(%s),  # %s\n", shape, dt,
                  in->name);
    else {
      long long bound = (long long)ir_index_bound(g, in);
      emit_printf(e,
                  "        torch.randint(0, %lld, %s, generator=gen, device=\"cuda\", dtype=%s),  # %s: indices into an "
                  "axis of size %lld\n",
                  bound, shape, dt, in->name, bound);
    }
  }
  emit_printf(e, "    ]\n\n\n");
  emit_printf(e, "RTOL, ATOL = %g, %g  # %s: |run - reference| <= ATOL * max|reference| + RTOL * |reference|\n", rtol,
              atol, dtype_name(tp->dtype));
  if (note) emit_printf(e, "# (not 1e-4: %s)\n", note);
  emit_printf(e, "\n\n");
  emit_printf(e,
              "def compare(out, ref):\n"
              "    \"\"\"(ok, max abs error, max |reference|) of run's output against the reference.\"\"\"\n"
              "    # masks and indices compared as numbers too (reference() keeps their dtype)\n"
              "    out, ref = out.to(torch.float64).reshape(ref.shape), ref.to(torch.float64)\n"
              "    scale = ref[torch.isfinite(ref)].abs().max().item() if torch.isfinite(ref).any() else 0.0\n"
              "    diff = (out - ref).abs()\n"
              "    same = (out == ref) | (torch.isnan(out) & torch.isnan(ref))\n"
              "    bad = ~(same | (diff <= ATOL * scale + RTOL * ref.abs()))\n"
              "    finite = torch.isfinite(diff)\n"
              "    err = diff[finite].max().item() if finite.any() else 0.0\n"
              "    return not bool(bad.any()), err, scale\n\n\n"
              "def bench(fn, args, warmup=3, reps=20):\n"
              "    \"\"\"Median milliseconds of fn(*args), timed with CUDA events.\"\"\"\n"
              "    for _ in range(warmup):\n"
              "        fn(*args)\n"
              "    torch.cuda.synchronize()\n"
              "    times = []\n"
              "    for _ in range(reps):\n"
              "        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
              "        start.record()\n"
              "        fn(*args)\n"
              "        end.record()\n"
              "        torch.cuda.synchronize()\n"
              "        times.append(start.elapsed_time(end))\n"
              "    return statistics.median(times)\n\n\n"
              "def warm(workers=None, timeout=None):\n"
              "    \"\"\"Compile every kernel for this machine's GPU before the first run(), in\n"
              "    `workers` processes at once (default: one per CPU), each building its share\n"
              "    into the compiler's disk cache, where run() then finds them.  A process\n"
              "    still compiling after `timeout` seconds is stopped and the kernel it was\n"
              "    compiling named.  Returns 0 if every process succeeded.\"\"\"\n"
              "    import os\n"
              "    import subprocess\n"
              "    import time\n"
              "\n"
              "    n = max(1, min(%d, workers or os.cpu_count() or 1))\n"
              "    me = os.path.abspath(__file__)\n"
              "    procs = [subprocess.Popen([sys.executable, me, \"--warm-part\", str(p), str(n)], stdout=subprocess.PIPE,\n"
              "                              text=True) for p in range(n)]\n"
              "    end, failed = None if timeout is None else time.time() + timeout, 0\n"
              "    for p in procs:\n"
              "        try:\n"
              "            out, _ = p.communicate(timeout=None if end is None else max(0.0, end - time.time()))\n"
              "            failed += p.returncode != 0\n"
              "        except subprocess.TimeoutExpired:\n"
              "            p.kill()\n"
              "            out, _ = p.communicate()\n"
              "            last = (out.strip().splitlines() or [\"compiling ?\"])[-1]\n"
              "            print(f\"warm: still {last} after {timeout} s: stopped\", file=sys.stderr)\n"
              "            failed += 1\n"
              "    return 1 if failed else 0\n\n\n"
              "def main(argv=None):\n"
              "    argv = sys.argv[1:] if argv is None else argv\n"
              "    if argv[:1] == [\"--compile-only\"]:\n"
              "        import re\n"
              "        if len(argv) > 2 or (len(argv) == 2 and not re.fullmatch(r\"sm_[0-9]+a?\", argv[1])):\n"
              "            print(f\"--compile-only takes one architecture such as sm_90a or sm_80, not {' '.join(argv[1:])!r}\",\n"
              "                  file=sys.stderr)\n"
              "            return 2\n"
              "        return compile_only(argv[1] if len(argv) > 1 else \"sm_90a\")\n"
              "    if argv[:1] == [\"--warm\"]:\n"
              "        if not torch.cuda.is_available():\n"
              "            print(\"--warm compiles for this machine's GPU, and it has none (--compile-only builds for a named \"\n"
              "                  \"one)\", file=sys.stderr)\n"
              "            return 2\n"
              "        try:\n"
              "            n, t = int(argv[1]) if len(argv) > 1 else None, float(argv[2]) if len(argv) > 2 else None\n"
              "        except ValueError:\n"
              "            print(\"--warm takes a number of processes and a timeout in seconds\", file=sys.stderr)\n"
              "            return 2\n"
              "        return warm(n, t)\n"
              "    if argv[:1] == [\"--warm-part\"] and len(argv) == 3:\n"
              "        return %swarm_part(int(argv[1]), int(argv[2]))\n"
              "    if argv:\n"
              "        print(\"usage: python3 MODULE.py               check run() against reference() and time both\\n\"\n"
              "              \"       python3 MODULE.py --compile-only [ARCH]   build every kernel for ARCH (default sm_90a), no GPU needed\\n\"\n"
              "              \"       python3 MODULE.py --warm [N]   compile every kernel for this GPU in N processes (default: one per CPU)\")\n"
              "        return 2\n"
              "    if not torch.cuda.is_available():\n"
              "        print(\"%s: needs a CUDA GPU\")\n"
              "        return 2\n"
              "    args = random_inputs()\n"
              "    out = run(*args)\n"
              "    ref = reference(*args)\n"
              "    torch.cuda.synchronize()\n"
              "    ok, err, scale = compare(out, ref)\n"
              "    print(f\"%s (%s, %s): max abs error {err:.3g} (max |reference| {scale:.3g}): {'ok' if ok else 'MISMATCH'}\")\n"
              "    if not ok:\n"
              "        return 1\n"
              "    t_run, t_ref = bench(run, args), bench(reference, args)\n"
              "    print(f\"time: run {t_run:.3f} ms, reference {t_ref:.3f} ms (median of 20)\")\n"
              "    return 0\n\n\n"
              "if __name__ == \"__main__\":\n"
              "    sys.exit(main())\n",
              tp->kernels.len, e->pre, g->entry ? g->entry : "entry", g->entry ? g->entry : "entry", e->t->name,
              dtype_name(tp->dtype));
}

Emit emit_begin(FILE *out, const TileProgram *tp, Target t, const EmitInfo *info) {
  Emit e = {.out = out, .a = tp->g->ctx->arena, .tp = tp, .info = info};
  switch (t) {
  case TARGET_TILELANG: e.t = &emit_tilelang; break;
  case TARGET_TRITON: e.t = &emit_triton; break;
  }
  emit_assign_names(&e);
  return e;
}

bool emit_end(const Emit *e, char *err, size_t errlen) {
  if (e->failed && err) snprintf(err, errlen, "%s", e->err);
  return !e->failed;
}

bool emit_module(FILE *out, const TileProgram *tp, Target t, const EmitInfo *info, char *err, size_t errlen) {
  Emit e = emit_begin(out, tp, t, info);
  header(&e);
  emit_printf(&e, "import statistics\nimport sys\n\nimport torch\n");
  e.t->imports(&e);
  emit_printf(&e, "\n\n");
  for (int k = 0; k < tp->kernels.len; k++) {
    e.k = tp->kernels.data[k];
    e.t->kernel(&e, e.k);
    emit_printf(&e, "\n\n");
  }
  e.k = NULL;
  e.t->extras(&e);
  run_fn(&e);
  register_fn(&e);
  reference_fn(&e);
  main_fn(&e);
  return emit_end(&e, err, errlen);
}
