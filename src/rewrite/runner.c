/*
 * runner.c: equality saturation in egg's manner.
 *
 * An iteration searches every enabled rule over every class (in id order)
 * with the e-graph frozen, then applies the matches (rules in list order,
 * matches in the order found), then rebuilds once.  Applying a match checks
 * the rule's conditions, then the rhs's shape under the match (pat_shape:
 * op_result must accept every new node, and the rhs root must have the
 * matched class's shape and kind: a generic guard, so no rule can change a
 * shape), then adds the rhs and merges it with the matched class.  New
 * e-nodes take the provenance of the matched lhs root and remember the rule.
 *
 * Stops: saturation (an iteration changed nothing and no rule is banned),
 * the iteration limit, the e-node limit (checked after every application,
 * so the e-graph never grows far past it) or the time limit (this thread's
 * CPU time, so other work on the machine does not move it; checked between
 * rules and every 256 applications; the only stop that depends on the
 * machine, so the examples must stop before it).
 *
 * Backoff (egg's BackoffScheduler): a rule whose matches in one iteration
 * exceed its threshold (1000, doubled each time it is banned) is banned for
 * 5 iterations (doubled likewise) and its matches dropped; saturation with
 * banned rules lifts the bans instead of stopping.  This keeps commutativity
 * and reassociation from crowding out the rest.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "egraph.h"

#define MATCH_LIMIT 1000
#define BAN_LENGTH 5

const char *eg_stop_name(EgStop s) {
  switch (s) {
  case EG_SATURATED: return "saturated";
  case EG_ITER_LIMIT: return "iteration limit";
  case EG_NODE_LIMIT: return "node limit";
  case EG_TIME_LIMIT: return "time limit";
  }
  return "?";
}

/* Apply one match (ri: the rule's index in eg->rule_names); true if the e-graph changed. */
static bool apply(EGraph *eg, const Rule *r, int ri, const Subst *s) {
  MatchView mv;
  subst_view(eg, r, s, &mv);
  if (!rule_conds_hold(r, &mv)) return false;
  EgFacts rf;
  if (!pat_shape(r->rhs, &mv, &rf)) return false;
  const EgFacts *root = &eg->classes[eg_find(eg, s->root)].f;
  if (!shape_equal(&rf.shape, &root->shape) || rf.kind != root->kind) return false;
  Binding b = {0};
  for (int i = 0; i < r->nvars; i++) b.cls[i] = s->cls[i];
  for (int i = 0; i < r->nattrs; i++)
    if (s->anode[i] >= 0) b.a[i] = eg->nodes[s->anode[i]].at;
  for (int i = 0; i < r->nops; i++) b.o[i] = s->op[i];
  const ENode *top = &eg->nodes[s->rnode];
  eg->cur_pos = top->pos;
  eg->cur_site = top->site;
  eg->cur_via = top->via;
  eg->cur_rule = ri;
  int before = eg->nnodes;
  int c = pat_add(eg, r->rhs, &b);
  eg->cur_rule = -1;
  if (c < 0) return eg->nnodes > before;
  return eg_union(eg, s->root, c) || eg->nnodes > before;
}

const EgReport *eg_run_rules(EGraph *eg, const Rule *const *rules, int nr, const EgRunOpts *o) {
  EgRunOpts d = o ? *o : (EgRunOpts){0};
  int max_iters = d.max_iters > 0 ? d.max_iters : 30;
  int max_nodes = d.max_nodes > 0 ? d.max_nodes : 20000;
  double max_s = d.max_seconds > 0 ? d.max_seconds : 5.0;
  EgReport *rep = arena_alloc(eg->arena, sizeof *rep);
  rep->nrules = nr;
  rep->iters = arena_alloc(eg->arena, sizeof(EgIter) * (size_t)max_iters);
  const char **names = arena_alloc(eg->arena, sizeof(char *) * (size_t)(nr ? nr : 1));
  for (int i = 0; i < nr; i++) names[i] = rules[i]->info.name;
  rep->rule_names = names;
  /* the e-graph's own index of each rule, for the e-nodes it makes */
  int *gidx = arena_alloc(eg->arena, sizeof(int) * (size_t)(nr ? nr : 1));
  for (int i = 0; i < nr; i++) {
    int k = 0;
    while (k < eg->rule_names.len && strcmp(eg->rule_names.data[k], names[i])) k++;
    if (k == eg->rule_names.len) vec_push(eg->arena, &eg->rule_names, names[i]);
    gidx[i] = k;
  }
  int *banned_until = arena_alloc(eg->arena, sizeof(int) * (size_t)(nr ? nr : 1));
  int *times_banned = arena_alloc(eg->arena, sizeof(int) * (size_t)(nr ? nr : 1));
  double t0 = ts_seconds(), c0 = ts_cpu_seconds();
  eg_rebuild(eg);
  rep->stop = EG_ITER_LIMIT;
  for (int iter = 1; iter <= max_iters; iter++) {
    double ti = ts_seconds();
    EgIter *it = &rep->iters[rep->niters++];
    it->iter = iter;
    it->matches = arena_alloc(eg->arena, sizeof(int) * (size_t)(nr ? nr : 1));
    it->applied = arena_alloc(eg->arena, sizeof(int) * (size_t)(nr ? nr : 1));
    Arena *scratch = arena_new();
    SubstVec *found = arena_alloc(scratch, sizeof(SubstVec) * (size_t)(nr ? nr : 1));
    bool timed_out = false, skipped = false;
    /* search, the e-graph frozen */
    for (int i = 0; i < nr && !timed_out; i++) {
      if (banned_until[i] > iter) {
        skipped = true;
        continue;
      }
      long limit = d.no_backoff ? -1 : (long)MATCH_LIMIT << times_banned[i];
      for (int c = 0; c < eg->nclasses; c++) {
        if (eg->uf[c] != c || !eg->classes[c].nnodes) continue;
        pat_match(eg, rules[i], c, scratch, &found[i]);
        if (limit >= 0 && found[i].len > limit) break;
      }
      it->matches[i] = found[i].len;
      if (limit >= 0 && found[i].len > limit) {
        banned_until[i] = iter + (BAN_LENGTH << times_banned[i]);
        times_banned[i]++;
        found[i].len = 0;
        skipped = true;
      }
      timed_out = ts_cpu_seconds() - c0 > max_s;
    }
    /* apply */
    int nodes_before = eg->nnodes;
    bool changed = false, node_limit = false;
    for (int i = 0; i < nr && !node_limit && !timed_out; i++) {
      for (int k = 0; k < found[i].len; k++) {
        if (apply(eg, rules[i], gidx[i], &found[i].data[k])) {
          changed = true;
          it->applied[i]++;
        }
        if (eg->nnodes >= max_nodes) {
          node_limit = true;
          break;
        }
        if ((k & 255) == 255 && ts_cpu_seconds() - c0 > max_s) {
          timed_out = true;
          break;
        }
      }
    }
    arena_free(scratch);
    eg_rebuild(eg);
    it->enodes = eg->nlive;
    it->eclasses = eg->nroots;
    it->seconds = ts_seconds() - ti;
    if (node_limit || eg->nnodes >= max_nodes) {
      rep->stop = EG_NODE_LIMIT;
      break;
    }
    if (timed_out || ts_cpu_seconds() - c0 > max_s) {
      rep->stop = EG_TIME_LIMIT;
      break;
    }
    if (!changed && eg->nnodes == nodes_before) {
      if (!skipped) {
        rep->stop = EG_SATURATED;
        break;
      }
      /* saturated only for the rules that ran: lift the bans */
      memset(banned_until, 0, sizeof(int) * (size_t)nr);
    }
  }
  rep->seconds = ts_seconds() - t0;
  rep->enodes = eg->nlive;
  rep->eclasses = eg->nroots;
  return rep;
}

const EgReport *eg_run(EGraph *eg, const EgRunOpts *o) {
  const Rule *all = rw_rules();
  int n = rw_nrules(), k = 0;
  const Rule **list = arena_alloc(eg->arena, sizeof(Rule *) * (size_t)n);
  for (int i = 0; i < n; i++) {
    bool on = o && o->enable ? o->enable[i] : !all[i].info.unsafe;
    if (on) list[k++] = &all[i];
  }
  return eg_run_rules(eg, list, k, o);
}

/* ---- reports ---- */

void eg_report_print(FILE *f, const EgReport *r) {
  fprintf(f, "%5s %8s %9s %9s  %s\n", "iter", "e-nodes", "e-classes", "seconds", "rules applied (matches)");
  for (int i = 0; i < r->niters; i++) {
    const EgIter *it = &r->iters[i];
    fprintf(f, "%5d %8d %9d %9.4f ", it->iter, it->enodes, it->eclasses, it->seconds);
    int shown = 0;
    for (int k = 0; k < r->nrules; k++) {
      if (!it->matches[k] && !it->applied[k]) continue;
      fprintf(f, "%s %s %d (%d)", shown++ ? "," : "", r->rule_names[k], it->applied[k], it->matches[k]);
    }
    fputc('\n', f);
  }
  fprintf(f, "stop: %s after %d iteration%s, %.4f s, %d e-nodes, %d e-classes\n", eg_stop_name(r->stop), r->niters,
          r->niters == 1 ? "" : "s", r->seconds, r->enodes, r->eclasses);
}

static void key_int(Json *j, const char *k, int64_t v) {
  json_key(j, k);
  json_int(j, v);
}

static void key_num(Json *j, const char *k, double v) {
  json_key(j, k);
  json_num(j, v);
}

void eg_report_json(Json *j, const EgReport *r) {
  json_begin_obj(j);
  json_key(j, "stop_reason");
  json_str(j, eg_stop_name(r->stop));
  key_int(j, "iterations", r->niters);
  key_num(j, "seconds", r->seconds);
  key_int(j, "enodes", r->enodes);
  key_int(j, "eclasses", r->eclasses);
  json_key(j, "per_iteration");
  json_begin_arr(j);
  for (int i = 0; i < r->niters; i++) {
    const EgIter *it = &r->iters[i];
    json_begin_obj(j);
    key_int(j, "iteration", it->iter);
    key_int(j, "enodes", it->enodes);
    key_int(j, "eclasses", it->eclasses);
    key_num(j, "seconds", it->seconds);
    json_key(j, "rules");
    json_begin_obj(j);
    for (int k = 0; k < r->nrules; k++) {
      if (!it->matches[k] && !it->applied[k]) continue;
      json_key(j, r->rule_names[k]);
      json_begin_obj(j);
      key_int(j, "matches", it->matches[k]);
      key_int(j, "applied", it->applied[k]);
      json_end_obj(j);
    }
    json_end_obj(j);
    json_end_obj(j);
  }
  json_end_arr(j);
  json_end_obj(j);
}
