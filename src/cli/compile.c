/*
 * compile.c: the program `opt` emits, shared by tiles, verify, opt and
 * explain: the searched plan lowered to tiles, or with --naive the naive
 * lowering.  Internal errors (a plan the lowering cannot realize, a broken
 * tile invariant) are printed and give NULL.
 */
#include <stdarg.h>

#include "cli.h"

int entry_bindings(Session *s, Opts *o, SizeArg *out, int max) {
  jmp_buf here;
  jmp_buf *prev = s->ctx.unwind;
  FILE *err = s->ctx.err;
  s->ctx.err = NULL;
  int n = 0;
  if (!setjmp(here)) {
    s->ctx.unwind = &here;
    n = elab_entry_nats(&s->ctx, &s->prog, o->entry, out, max);
  }
  s->ctx.unwind = prev;
  s->ctx.err = err;
  for (int i = 0; i < o->nsizes; i++)
    for (int k = 0; k < n; k++)
      if (!strcmp(out[k].name, o->sizes[i].name)) out[k].value = o->sizes[i].value;
  return n;
}

static void size_error(Ctx *c, Pos p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_diag_print(c, p, "error", fmt, ap);
  va_end(ap);
}

/* Sizes no kernel runs: a tensor with no elements (a contracted or reduced
   dimension of 0 makes the kernels read past their inputs: they guard
   their tiles, not empty axes) and one bigger than any GPU (its grid
   passes CUDA's limits).  Said at the op's source; false if any. */
#define MAX_TENSOR_BYTES 1e12
static bool sizes_compilable(Graph *g, DType dt) {
  char sh[128];
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    int64_t numel = shape_numel(&n->shape);
    const char *what = n->op == OP_INPUT ? n->name : op_info[n->op].name;
    if (numel == 0) {
      size_error(g->ctx, n->pos, "'%s' of shape %s has no elements: the GPU kernels need every tensor nonempty "
                 "('tilesmith eval' computes it on the CPU)", what, shape_str(&n->shape, sh, sizeof sh));
      return false;
    }
    double bytes = (double)numel * (n->kind == EK_REAL ? dtype_bytes(dt) : 8);
    if (bytes > MAX_TENSOR_BYTES) {
      size_error(g->ctx, n->pos, "'%s' of shape %s would take %.3g TB: no GPU holds a tensor over %.0f TB", what,
                 shape_str(&n->shape, sh, sizeof sh), bytes / 1e12, MAX_TENSOR_BYTES / 1e12);
      return false;
    }
  }
  return true;
}

TileProgram *compile_program(Opts *o, Graph *g, DType dt, Compiled *out) {
  if (!sizes_compilable(g, dt)) return NULL;
  Compiled local;
  if (!out) out = &local;
  memset(out, 0, sizeof *out);
  out->g = out->orig = g;
  const Gpu *gpu = o->gpu_profile ? o->gpu_profile : gpu_get(GPU_H200);
  if (o->naive) {
    out->tp = tile_lower(g, dt);
  } else {
    SearchOpts so = {.gpu = o->gpu_profile, .candidate = o->candidate, .sched = o->has_schedule ? &o->schedule : NULL,
                     .budget = o->search_budget};
    /* equality saturation, then the plan search on the extracted term */
    g = out->g = search_rewrite(g, o->bind, o->nbind, &out->rewrite);
    out->plan = plan_search(g, dt, &so, &out->stats);
    if (!out->plan) {
      fprintf(stderr, "tilesmith: the search priced %d runner-up plan%s for '%s': there is no --candidate %d\n",
              out->stats.ncands, out->stats.ncands == 1 ? "" : "s", o->entry, o->candidate);
      return NULL;
    }
    if (out->stats.sched_unmet && !o->quiet_schedule)
      fprintf(stderr, "tilesmith: warning: --schedule fits no candidate of %d fused kernel%s: the cost model chose %s\n",
              out->stats.sched_unmet, out->stats.sched_unmet == 1 ? "" : "s",
              out->stats.sched_unmet == 1 ? "its schedule" : "theirs");
    out->tp = tile_lower_plan(out->plan);
    bool fixed = o->candidate || o->has_schedule || o->tuned; /* a plan the user asked for */
    if (!out->tp || (!fixed && !tile_check(out->tp, stderr))) {
      for (int i = 0; i < out->plan->kernels.len; i++)
        if (out->plan->kernels.data[i]->why[0])
          fprintf(stderr, "tilesmith: %s: kernel %d: %s\n", fixed ? "internal error" : "note", i,
                  out->plan->kernels.data[i]->why);
      if (fixed) {
        fprintf(stderr, "tilesmith: internal error: the searched plan could not be lowered\n");
        return NULL;
      }
      /* a defect of the search (a plan its lowering cannot realize): the
         program is still compiled, by the naive lowering, and it says so;
         verify then checks that lowering, as opt emits it */
      fprintf(stderr,
              "tilesmith: warning: the searched plan for '%s' could not be lowered (a defect of the search); "
              "the naive lowering is used instead\n",
              o->entry);
      out->plan = NULL;
      out->g = out->orig;
      out->tp = tile_lower(out->orig, dt);
    }
  }
  if (!tile_check(out->tp, stderr)) {
    fprintf(stderr, "tilesmith: internal error: the lowering broke a tile invariant\n");
    return NULL;
  }
  /* tensors no GPU of the profile can hold: said, by name (the module is still written) */
  double total = 0;
  for (int i = 0; i < out->tp->globals.len; i++) {
    const TBuf *b = out->tp->globals.data[i];
    double bytes = (double)shape_numel(&b->shape) * dtype_bytes(b->dtype);
    total += bytes;
    if (bytes > gpu->hbm)
      fprintf(stderr, "tilesmith: warning: %s (%s) needs %.3g GB, more than the %s's %.0f GB\n", b->name,
              dtype_name(b->dtype), bytes / 1e9, gpu->name, gpu->hbm / 1e9);
  }
  if (total > gpu->hbm)
    fprintf(stderr, "tilesmith: warning: the program's tensors need %.3g GB together, more than the %s's %.0f GB\n",
            total / 1e9, gpu->name, gpu->hbm / 1e9);
  return out->tp;
}

/* The schedule measured on the GPU for g (--tuned), into o->schedule,
   unless one is given or the plan is not the search's choice: true with
   the record in *rec when there is one. */
static bool apply_tuned(Opts *o, const Graph *g, DType dt, TunedRec *rec) {
  const char *tpath = tuned_path(o);
  if (!tpath || o->naive || o->has_schedule || o->candidate) return false;
  const Gpu *gpu = o->gpu_profile ? o->gpu_profile : gpu_get(GPU_H200);
  int got = tuned_lookup(tpath, tune_key(g, dt, gpu), rec);
  char why[160];
  if (got < 0) {
    fprintf(stderr, "tilesmith: warning: cannot read the tuned schedules in %s\n", tpath);
    return false;
  }
  if (!got) return false;
  if (strcmp(rec->schedule, "-") && !schedule_parse(rec->schedule, &o->schedule, why, sizeof why)) {
    fprintf(stderr, "tilesmith: warning: %s: a record of '%s' has a bad schedule (%s): ignored\n", tpath, o->entry, why);
    return false;
  }
  o->has_schedule = strcmp(rec->schedule, "-") != 0;
  return true;
}

TileProgram *compile_entry(Session *s, Opts *o, DType dt, Compiled *out) {
  Graph *g = load(s, o->file) ? elaborate(s, o, o->entry) : NULL;
  if (!g) return NULL;
  o->nbind = entry_bindings(s, o, o->bind, 64);
  TunedRec rec = {0};
  bool tuned = apply_tuned(o, g, dt, &rec);
  TileProgram *tp = compile_program(o, g, dt, out);
  if (out) out->tuned = tuned, out->rec = rec;
  return tp;
}

const char *sizes_text(Arena *a, const Opts *o) {
  char *sizes = arena_strdup(a, "");
  for (int i = 0; i < o->nsizes; i++)
    sizes = arena_printf(a, "%s%s%s=%lld", sizes, i ? "," : "", o->sizes[i].name, (long long)o->sizes[i].value);
  return sizes;
}

const char *options_text(Arena *a, const Opts *o) {
  const char *s = "";
  if (o->naive) s = arena_printf(a, "%s --naive", s);
  if (o->candidate) s = arena_printf(a, "%s --candidate %d", s, o->candidate);
  if (o->search_budget) s = arena_printf(a, "%s --search-budget %d", s, o->search_budget);
  if (o->has_schedule && o->schedule_text) s = arena_printf(a, "%s --schedule %s", s, o->schedule_text);
  if (o->tuned) s = arena_printf(a, "%s --tuned %s", s, o->tuned);
  if (o->gpu) s = arena_printf(a, "%s --gpu %s", s, o->gpu);
  if (o->grad) s = arena_printf(a, "%s --grad", s);
  return s;
}

bool opts_dtype(const Opts *o, DType *dt) {
  *dt = DT_BF16;
  if (!o->dtype || dtype_parse(o->dtype, dt)) return true;
  usage_error("--dtype must be bf16, f16 or f32, not '%s'", o->dtype);
  return false;
}
