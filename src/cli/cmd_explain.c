/*
 * cmd_explain.c: `tilesmith explain`: why opt emits what it emits.
 *
 * Compiles the entry exactly as opt does (equality saturation, the plan
 * search, the plan lowering) and reports, per kernel of the program: what
 * it computes (graph nodes and their source lines), its grid and loops,
 * the role of each axis (grid, stream, whole, inner; splits) and the
 * loop-carried states with the law that streams them, bytes moved and
 * FLOPs, and the cost model's predicted time; then the program's global
 * buffers, the rewrites the extracted term uses, the search's statistics,
 * the predicted total against the roofline floor, and the runner-up plans
 * the search priced.  --json writes the same as one JSON object.
 */
#include <math.h>
#include <stdlib.h>

#include "../cost/cost.h"
#include "cli.h"

static const PKernel *plan_kernel_of(const Plan *p, const Kernel *k) {
  for (int i = 0; p && i < p->kernels.len; i++)
    if (p->kernels.data[i]->root == k->node) return p->kernels.data[i];
  return NULL;
}


/* "file:line" of a node (its site in the user's file, else where it is written) */
static const char *src_line(Arena *a, const Node *n) {
  Pos p = n->site.file ? n->site : n->pos;
  if (!p.file) return NULL;
  return arena_printf(a, "%s:%u", p.file->name, p.line);
}

/* the distinct source lines of a kernel's nodes, in order */
static int source_lines(Arena *a, const Kernel *k, const char **out, int max) {
  int n = 0;
  for (int i = 0; i < k->covers.len && n < max; i++) {
    const char *s = src_line(a, k->covers.data[i]);
    if (!s) continue;
    bool seen = false;
    for (int j = 0; j < n; j++) seen |= !strcmp(out[j], s);
    if (!seen) out[n++] = s;
  }
  return n;
}

typedef struct Loops { const Kernel *k; FILE *f; Json *j; int n; } Loops;

static void expr_text(FILE *f, const SExpr *e) { sexpr_print(f, e); }

static bool each_loop(const Stmt *s, int depth, void *ud) {
  Loops *l = ud;
  if (s->kind != ST_LOOP) return true;
  if (l->j) {
    json_begin_obj(l->j);
    json_key(l->j, "var");
    json_str(l->j, tvar_name(s->var));
    json_key(l->j, "depth");
    json_int(l->j, depth);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    expr_text(m, s->lo);
    fclose(m);
    json_key(l->j, "lo");
    json_str(l->j, buf);
    free(buf);
    m = open_memstream(&buf, &len);
    expr_text(m, s->hi);
    fclose(m);
    json_key(l->j, "hi");
    json_str(l->j, buf);
    free(buf);
    json_key(l->j, "stages");
    json_int(l->j, s->stages);
    json_key(l->j, "trips_max");
    json_int(l->j, tile_loop_trips_max(l->k, s));
    json_end_obj(l->j);
  } else {
    fprintf(l->f, "    loop %s over [", tvar_name(s->var));
    expr_text(l->f, s->lo);
    fputs(", ", l->f);
    expr_text(l->f, s->hi);
    fprintf(l->f, ")%s, stages %d, at most %lld trips\n", depth ? " (nested)" : "", s->stages,
            (long long)tile_loop_trips_max(l->k, s));
  }
  l->n++;
  return true;
}

/* a reduction defer.c moved past its loop: text, or its state's node id
   (-1: a tile of no node) into the JSON array */
static bool each_deferred(const Stmt *s, int depth, void *ud) {
  (void)depth;
  Loops *l = ud;
  if (s->kind != ST_REDUCE || !s->deferred) return true;
  const Node *n = s->of;
  if (l->j) json_int(l->j, n ? n->id : -1);
  else if (n)
    fprintf(l->f, "    %%%d (%s): accumulated element-wise in the loop, reduced once after it\n", n->id,
            op_info[n->op].name);
  else
    fprintf(l->f, "    %s (%s): accumulated element-wise in the loop, reduced once after it\n", s->dst->name,
            op_info[s->reduce_op].name);
  return true;
}

static const char *state_law(Arena *a, const PState *st) {
  if (st->dep && st->shift)
    return arena_printf(a, "shifted to the running mean of %%%d (sum) by %g^2*n_old*(mean_old - mean_new)^2 (Chan)",
                        st->dep->id, st->law_c);
  if (st->dep && st->law_f) /* a positive factor per row times the constant */
    return arena_printf(a, "rescaled by exp(%g*%%%d*(max_old - max_new)) against %%%d (%s), %%%d (%s) a row's factor",
                        st->law_c, st->law_f->id, st->dep->id, op_info[st->dep->op].name, st->law_f->id,
                        op_info[st->law_f->op].name);
  if (st->dep)
    return arena_printf(a, "rescaled by exp(%g*(max_old - max_new)) against %%%d (%s)", st->law_c, st->dep->id,
                        op_info[st->dep->op].name);
  return "its monoid";
}

static void text_kernel(FILE *f, Arena *a, const TileProgram *tp, const Plan *p, const Kernel *k, const KernelCost *c) {
  fprintf(f, "\nkernel %s  grid [%lld, %lld, %lld]  threads %d  predicted %.1f us\n", k->name, (long long)k->grid[0],
          (long long)k->grid[1], (long long)k->grid[2], k->threads, c->seconds * 1e6);
  fprintf(f, "  computes:");
  int col = 12;
  for (int i = 0; i < k->covers.len; i++) {
    const Node *n = k->covers.data[i];
    if (op_info[n->op].cls == OPC_LEAF) continue;
    const char *w = arena_printf(a, " %%%d %s", n->id, op_info[n->op].name);
    if (col + (int)strlen(w) > 100) fprintf(f, "\n           "), col = 12;
    fputs(w, f);
    col += (int)strlen(w);
  }
  fputc('\n', f);
  const char *lines[64];
  int nl = source_lines(a, k, lines, 64);
  fprintf(f, "  source:");
  for (int i = 0; i < nl; i++) fprintf(f, " %s", lines[i]);
  fputc('\n', f);
  const PKernel *pk = plan_kernel_of(p, k);
  if (pk && !pk->naive && k->kind == KERNEL_FUSED) {
    fprintf(f, "  axes:");
    for (int a2 = 0; a2 < pk->naxes; a2++) {
      const PAxis *ax = &pk->ax[a2];
      fprintf(f, " %s%s%lld:%s/%lld", a2 ? ", " : "", ax->sym ? ax->sym : "", (long long)ax->size,
              axis_role_name(ax->role), (long long)ax->tile);
      if (ax->splits > 1) fprintf(f, " x%lld blocks", (long long)ax->splits);
    }
    fputc('\n', f);
    for (int s = 0; s < pk->nstates; s++) {
      const PState *st = &pk->states[s];
      fprintf(f, "  state %%%d (%s), pass %d: %s", st->node->id, op_info[st->node->op].name, st->pass, state_law(a, st));
      for (int q = 0; q < st->npost; q++)
        fprintf(f, "; then %s %%%d after the loop", st->post[q].sign > 0 ? "times" : "divided by", st->post[q].f->id);
      fputc('\n', f);
    }
  } else if (k->kind == KERNEL_COMBINE) {
    fprintf(f, "  merges the partial states of a split stream\n");
  }
  Loops l = {k, f, NULL, 0};
  tile_walk(&k->body, each_loop, &l);
  tile_walk(&k->body, each_deferred, &l);
  fprintf(f, "  moves %.3g MB loaded, %.3g MB stored (modelled HBM %.3g MB); %.3g GFLOP tensor core, %.3g GFLOP other, "
             "%.3g G special functions\n",
          c->loads / 1e6, c->stores / 1e6, c->hbm / 1e6, c->tc_flops / 1e9, c->fp_flops / 1e9, c->sfu_ops / 1e9);
  (void)tp;
}

static void json_kernel(Json *j, Arena *a, const Plan *p, const Kernel *k, const KernelCost *c) {
  json_begin_obj(j);
  json_key(j, "name");
  json_str(j, k->name);
  json_key(j, "kind");
  json_str(j, k->kind == KERNEL_COMBINE ? "combine" : k->kind == KERNEL_FUSED ? "fused" : "naive");
  json_key(j, "nodes");
  json_begin_arr(j);
  for (int i = 0; i < k->covers.len; i++)
    if (op_info[k->covers.data[i]->op].cls != OPC_LEAF) {
      json_begin_obj(j);
      json_key(j, "id");
      json_int(j, k->covers.data[i]->id);
      json_key(j, "op");
      json_str(j, op_info[k->covers.data[i]->op].name);
      json_end_obj(j);
    }
  json_end_arr(j);
  const char *lines[64];
  int nl = source_lines(a, k, lines, 64);
  json_key(j, "source_lines");
  json_begin_arr(j);
  for (int i = 0; i < nl; i++) json_str(j, lines[i]);
  json_end_arr(j);
  json_key(j, "grid");
  json_begin_arr(j);
  for (int d = 0; d < 3; d++) json_int(j, k->grid[d]);
  json_end_arr(j);
  json_key(j, "threads");
  json_int(j, k->threads);
  json_key(j, "loops");
  json_begin_arr(j);
  Loops l = {k, NULL, j, 0};
  tile_walk(&k->body, each_loop, &l);
  json_end_arr(j);
  json_key(j, "deferred_reductions"); /* the state nodes whose tiles accumulate element-wise (defer.c) */
  json_begin_arr(j);
  tile_walk(&k->body, each_deferred, &l);
  json_end_arr(j);
  const PKernel *pk = plan_kernel_of(p, k);
  if (pk && !pk->naive && k->kind == KERNEL_FUSED) {
    json_key(j, "axes");
    json_begin_arr(j);
    for (int a2 = 0; a2 < pk->naxes; a2++) {
      const PAxis *ax = &pk->ax[a2];
      json_begin_obj(j);
      json_key(j, "size");
      json_int(j, ax->size);
      json_key(j, "sym");
      if (ax->sym) json_str(j, ax->sym);
      else json_null(j);
      json_key(j, "role");
      json_str(j, axis_role_name(ax->role));
      json_key(j, "tile");
      json_int(j, ax->tile);
      json_key(j, "splits");
      json_int(j, ax->splits);
      json_end_obj(j);
    }
    json_end_arr(j);
    json_key(j, "states");
    json_begin_arr(j);
    for (int s = 0; s < pk->nstates; s++) {
      const PState *st = &pk->states[s];
      json_begin_obj(j);
      json_key(j, "node");
      json_int(j, st->node->id);
      json_key(j, "op");
      json_str(j, op_info[st->node->op].name);
      json_key(j, "pass");
      json_int(j, st->pass);
      json_key(j, "law");
      json_str(j, !st->dep ? "monoid" : st->shift ? "mean-shift" : "exp-rescale");
      json_key(j, "rescaled_against");
      if (st->dep) json_int(j, st->dep->id);
      else json_null(j);
      json_key(j, "law_c"); /* exp(law_c * row_factor * (max_old - max_new)); (law_c * (y - mean))^2 */
      if (st->dep) json_num(j, st->law_c);
      else json_null(j);
      json_key(j, "row_factor");
      if (st->law_f) json_int(j, st->law_f->id);
      else json_null(j);
      json_key(j, "post_factors");
      json_begin_arr(j);
      for (int q = 0; q < st->npost; q++) json_int(j, st->post[q].f->id);
      json_end_arr(j);
      json_end_obj(j);
    }
    json_end_arr(j);
  }
  json_key(j, "reads_bytes");
  json_num(j, c->loads);
  json_key(j, "writes_bytes");
  json_num(j, c->stores);
  json_key(j, "footprint_bytes"); /* the distinct tensors it reads and writes, each once */
  json_num(j, c->footprint);
  json_key(j, "hbm_bytes");
  json_num(j, c->hbm);
  json_key(j, "flops");
  json_num(j, c->tc_flops + c->fp_flops + c->sfu_ops);
  json_key(j, "tensor_core_flops");
  json_num(j, c->tc_flops);
  json_key(j, "predicted_us");
  json_num(j, c->seconds * 1e6);
  json_end_obj(j);
}

int cmd_explain(Opts *o) {
  DType dt;
  if (!opts_dtype(o, &dt)) return EXIT_USAGE;
  const Gpu *gpu = o->gpu_profile ? o->gpu_profile : gpu_get(GPU_H200);
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Compiled cp;
  TileProgram *tp = compile_entry(&s, o, dt, &cp);
  if (!tp) goto done;
  int nk = tp->kernels.len;
  KernelCost *kc = arena_alloc(s.arena, sizeof *kc * (size_t)(nk ? nk : 1));
  double total = cost_program(tp, gpu, kc), flops, bytes;
  double floor_s = cost_floor(cp.g, dt, gpu, &flops, &bytes);
  if (o->format && !strcmp(o->format, "json")) {
    Json j = {.f = stdout, .pretty = true};
    json_begin_obj(&j);
    json_key(&j, "entry");
    json_str(&j, o->entry);
    json_key(&j, "backward");
    json_bool(&j, o->backward);
    json_key(&j, "gpu");
    json_str(&j, gpu->name);
    json_key(&j, "dtype");
    json_str(&j, dtype_name(dt));
    json_key(&j, "kernels");
    json_begin_arr(&j);
    for (int k = 0; k < nk; k++) json_kernel(&j, s.arena, cp.plan, tp->kernels.data[k], &kc[k]);
    json_end_arr(&j);
    json_key(&j, "global_buffers");
    tile_json_globals(&j, tp);
    json_key(&j, "rewrites");
    json_begin_arr(&j);
    for (int i = 0; i < cp.rewrite.nrules; i++) json_str(&j, cp.rewrite.rules[i]);
    json_end_arr(&j);
    json_key(&j, "predicted_us");
    json_num(&j, total * 1e6);
    json_key(&j, "floor_us");
    json_num(&j, floor_s * 1e6);
    json_key(&j, "floor_flops");
    json_num(&j, flops);
    json_key(&j, "floor_bytes");
    json_num(&j, bytes);
    json_key(&j, "naive_predicted_us");
    json_num(&j, cp.plan ? cp.stats.naive_cost * 1e6 : total * 1e6);
    json_key(&j, "tuned");
    if (cp.tuned) {
      json_begin_obj(&j);
      json_kstr(&j, "schedule", cp.rec.schedule);
      json_kstr(&j, "target", cp.rec.target);
      json_knum(&j, "measured_us", cp.rec.measured_us);
      json_knum(&j, "predicted_us", cp.rec.predicted_us);
      json_kstr(&j, "device", cp.rec.device);
      json_kstr(&j, "versions", cp.rec.versions);
      json_kstr(&j, "date", cp.rec.date);
      json_end_obj(&j);
    } else {
      json_null(&j);
    }
    json_key(&j, "candidates");
    json_begin_arr(&j);
    for (int i = 0; cp.plan && i < cp.stats.ncands; i++) {
      json_begin_obj(&j);
      json_key(&j, "predicted_us");
      json_num(&j, cp.stats.cands[i].cost * 1e6);
      json_key(&j, "kernels");
      json_int(&j, cp.stats.cands[i].kernels);
      json_key(&j, "plan");
      json_str(&j, cp.stats.cands[i].what);
      json_end_obj(&j);
    }
    json_end_arr(&j);
    json_key(&j, "search");
    json_begin_obj(&j);
    json_key(&j, "seconds");
    json_num(&j, cp.stats.seconds + cp.rewrite.seconds);
    json_key(&j, "stop_reason");
    json_str(&j, cp.plan ? search_stop_name(cp.stats.stop) : "naive lowering (no search)");
    json_key(&j, "iterations");
    json_int(&j, cp.rewrite.iterations);
    json_key(&j, "enodes");
    json_int(&j, cp.rewrite.enodes);
    json_key(&j, "rewrite_stop_reason");
    json_str(&j, eg_stop_name(cp.rewrite.stop));
    json_key(&j, "sweeps");
    json_int(&j, cp.stats.sweeps);
    json_key(&j, "moves_tried");
    json_int(&j, cp.stats.moves_tried);
    json_key(&j, "moves_taken");
    json_int(&j, cp.stats.moves_taken);
    json_key(&j, "kernels_priced");
    json_int(&j, cp.stats.kernels_priced);
    json_key(&j, "budget");
    json_int(&j, o->search_budget ? o->search_budget : SEARCH_BUDGET);
    json_end_obj(&j);
    json_end_obj(&j);
    fputc('\n', stdout);
  } else {
    printf("explain %s%s (storage %s, GPU profile %s)\n", o->entry, o->backward ? ", backward pass" : "", dtype_name(dt),
           gpu->name);
    printf("predicted %.1f us on %d kernel%s; roofline floor %.1f us (%.3g GFLOP, %.3g MB): %.2fx the floor\n",
           total * 1e6, nk, nk == 1 ? "" : "s", floor_s * 1e6, flops / 1e9, bytes / 1e6, floor_s > 0 ? total / floor_s : 0);
    if (cp.plan) {
      printf("rewrites used:");
      for (int i = 0; i < cp.rewrite.nrules; i++) printf(" %s", cp.rewrite.rules[i]);
      if (!cp.rewrite.nrules) printf(" none");
      printf(" (equality saturation: %d iterations, %d e-nodes, %s, %.3f s)\n", cp.rewrite.iterations,
             cp.rewrite.enodes, eg_stop_name(cp.rewrite.stop), cp.rewrite.seconds);
      printf("search: %.3f s, %d sweep%s, %d moves tried, %d taken, %d of %d kernels priced; stop: %s\n",
             cp.stats.seconds, cp.stats.sweeps, cp.stats.sweeps == 1 ? "" : "s", cp.stats.moves_tried,
             cp.stats.moves_taken, cp.stats.kernels_priced, o->search_budget ? o->search_budget : SEARCH_BUDGET,
             search_stop_name(cp.stats.stop));
      if (cp.tuned)
        printf("schedule: %s, tuned on %s: %.1f us measured with %s (%s; %s)\n", cp.rec.schedule, cp.rec.device,
               cp.rec.measured_us, cp.rec.target, cp.rec.versions, cp.rec.date);
    } else {
      printf("naive lowering (--naive): no rewriting, no search\n");
    }
    for (int k = 0; k < nk; k++) text_kernel(stdout, s.arena, tp, cp.plan, tp->kernels.data[k], &kc[k]);
    printf("\nglobal buffers:\n");
    char sh[256];
    for (int i = 0; i < tp->globals.len; i++) {
      const TBuf *b = tp->globals.data[i];
      printf("  %-7s %s : %s%s\n", tile_role_name(b->role), b->name, dtype_name(b->dtype), shape_str(&b->shape, sh, sizeof sh));
    }
    if (cp.plan && cp.stats.ncands) {
      printf("\nrunners-up (predicted):\n");
      for (int i = 0; i < cp.stats.ncands; i++)
        printf("  %10.1f us  %3d kernel%s  %s\n", cp.stats.cands[i].cost * 1e6, cp.stats.cands[i].kernels,
               cp.stats.cands[i].kernels == 1 ? " " : "s", cp.stats.cands[i].what);
    }
  }
  rc = EXIT_OK;
done:
  session_close(&s);
  return rc;
}
