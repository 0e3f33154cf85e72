/*
 * cmd_tune.c: `tilesmith tune`: the cost model's best few schedules of an
 * entry's searched plan, written as modules (both targets) with a
 * manifest, for tools/tune.py to time on the GPU (tuned.c says what
 * becomes of the winner).  The plan is the one `opt` searches; the
 * schedules differ in the streamed loop's tile and the pipeline depth, the
 * choices the H200 sweep of 2026-12-03 found the cost model least sure of,
 * whether TileLang loads tiles by TMA (which that sweep found faster for
 * some kernels and slower for others) and whether it stores a product's
 * final tile by TMA (store=1, off by default until timed over the set).
 * Schedules that give the same modules are written once.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../emit/emit.h"
#include "cli.h"

/* the schedules tried, the cost model's own first ("-"); store=1 second,
   since the cost model prices it as the first (its stores are the same
   bytes) and a stable sort keeps it ahead of the others it ties with */
static const char *const tried[] = {"-", "store=1", "stages=2", "copy=0", "copy=1", "stream=32", "stream=64",
                                    "stream=64,stages=2", "stream=128", "stream=128,stages=2"};
#define NTRIED (int)(sizeof tried / sizeof tried[0])

/* a module past its header's first two lines (the command that makes it,
   which names the schedule): what two schedules that emit the same code share */
static const char *body(const char *m, size_t len, size_t *rest) {
  const char *p = m;
  for (int nl = 0; nl < 2; nl++) {
    const char *eol = memchr(p, '\n', len - (size_t)(p - m));
    if (!eol) return *rest = len, m; /* no header: the whole module */
    p = eol + 1;
  }
  *rest = len - (size_t)(p - m);
  return p;
}

static bool same_module(const char *a, size_t la, const char *b, size_t lb) {
  size_t ra, rb;
  const char *pa = body(a, la, &ra), *pb = body(b, lb, &rb);
  return ra == rb && !memcmp(pa, pb, ra);
}

typedef struct Cand {
  const char *spec;
  double predicted;      /* seconds */
  char *mod[2];          /* its TileLang and Triton modules, emitted once: compared (duplicates) and written */
  size_t len[2];
  char err[2][256];      /* why a module could not be emitted ("" when it was) */
} Cand;

int cmd_tune(Opts *o) {
  DType dt;
  if (!opts_dtype(o, &dt)) return EXIT_USAGE;
  if (o->naive || o->candidate || o->has_schedule)
    return usage_error("tune tries schedules of the searched plan itself: no --naive, --candidate or --schedule");
  const Gpu *gpu = o->gpu_profile ? o->gpu_profile : gpu_get(GPU_H200);
  int top = o->top ? o->top : 3;
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Cand cands[NTRIED];
  int n = 0, built = 0; /* modules of cands[0, built) are freed at the end */
  Graph *g = load(&s, o->file) ? elaborate(&s, o, o->entry) : NULL;
  if (!g) goto done;
  o->nbind = entry_bindings(&s, o, o->bind, 64);
  const char *sizes = sizes_text(s.arena, o);
  EmitInfo info = {.file = o->file, .entry = o->entry, .sizes = sizes, .source = g};
  for (int i = 0; i < NTRIED; i++) {
    Opts oi = *o;
    oi.quiet_schedule = true;
    oi.has_schedule = strcmp(tried[i], "-") != 0;
    oi.schedule_text = oi.has_schedule ? tried[i] : NULL;
    char why[160];
    if (oi.has_schedule && !schedule_parse(tried[i], &oi.schedule, why, sizeof why)) continue;
    Compiled cp;
    TileProgram *tp = compile_program(&oi, g, dt, &cp);
    if (!tp) {
      if (i == 0) goto done; /* the plan itself failed: said already */
      continue;
    }
    if (oi.has_schedule && cp.stats.sched_unmet) continue; /* the schedule did not apply */
    /* what is written: both targets' modules (schedules can differ in the
       tile program and still emit the same code, a copy mode with nothing
       to copy); one that could not be emitted is no one's duplicate */
    Cand c = {.spec = tried[i], .predicted = cost_program(tp, gpu, NULL)};
    info.options = options_text(s.arena, &oi);
    bool emitted = true;
    for (int t = 0; t < 2; t++) {
      FILE *f = open_memstream(&c.mod[t], &c.len[t]);
      if (!f) {
        snprintf(c.err[t], sizeof c.err[t], "%s", strerror(errno));
        emitted = false;
        continue;
      }
      if (!emit_module(f, tp, t ? TARGET_TRITON : TARGET_TILELANG, &info, c.err[t], sizeof c.err[t])) emitted = false;
      else c.err[t][0] = 0;
      fclose(f);
    }
    bool dup = false;
    for (int k = 0; k < n && !dup && emitted; k++)
      dup = !cands[k].err[0][0] && !cands[k].err[1][0] && same_module(cands[k].mod[0], cands[k].len[0], c.mod[0], c.len[0]) &&
            same_module(cands[k].mod[1], cands[k].len[1], c.mod[1], c.len[1]);
    if (dup) {
      free(c.mod[0]), free(c.mod[1]);
      continue;
    }
    cands[n++] = c;
    built = n;
  }
  /* the cost model's order; its own choice is always written */
  for (int i = 1; i < n; i++)
    for (int k = i; k > 1 && cands[k].predicted < cands[k - 1].predicted; k--) {
      Cand t = cands[k];
      cands[k] = cands[k - 1];
      cands[k - 1] = t;
    }
  if (n > top) n = top;
  if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "tilesmith: error: cannot make %s: %s\n", o->out, strerror(errno));
    goto done;
  }
  const char *mpath = arena_printf(s.arena, "%s/manifest.json", o->out);
  FILE *mf = fopen(mpath, "w");
  if (!mf) {
    fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", mpath, strerror(errno));
    goto done;
  }
  char key[32];
  snprintf(key, sizeof key, "%016llx", (unsigned long long)tune_key(g, dt, gpu));
  Json j = {.f = mf, .pretty = true};
  json_begin_obj(&j);
  json_kstr(&j, "key", key);
  json_kstr(&j, "file", o->file);
  json_kstr(&j, "entry", o->entry);
  json_kstr(&j, "sizes", sizes);
  json_kstr(&j, "dtype", dtype_name(dt));
  json_kstr(&j, "gpu", gpu->name);
  json_key(&j, "candidates");
  json_begin_arr(&j);
  bool ok = true;
  printf("tune %s: key %s, %d schedule%s of the searched plan (cost model's order), both targets, in %s\n", o->entry,
         key, n, n == 1 ? "" : "s", o->out);
  for (int i = 0; i < n && ok; i++) {
    for (int t = 0; t < 2 && ok; t++) {
      Target target = t ? TARGET_TRITON : TARGET_TILELANG;
      const char *name = arena_printf(s.arena, "%s_%d_%s.py", o->entry, i, target_name(target));
      const char *path = arena_printf(s.arena, "%s/%s", o->out, name);
      FILE *f = cands[i].err[t][0] ? NULL : fopen(path, "w");
      ok = f && fwrite(cands[i].mod[t], 1, cands[i].len[t], f) == cands[i].len[t];
      if (f && fclose(f) != 0) ok = false;
      if (!ok) {
        fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", path,
                cands[i].err[t][0] ? cands[i].err[t] : strerror(errno));
        break;
      }
      json_begin_obj(&j);
      json_kstr(&j, "schedule", cands[i].spec);
      json_kstr(&j, "target", target_name(target));
      json_kstr(&j, "module", name);
      json_knum(&j, "predicted_us", cands[i].predicted * 1e6);
      json_end_obj(&j);
    }
    printf("  %d  %-22s predicted %9.1f us\n", i, cands[i].spec, cands[i].predicted * 1e6);
  }
  json_end_arr(&j);
  json_end_obj(&j);
  fputc('\n', mf);
  if (fclose(mf) != 0) ok = false;
  if (!ok) goto done;
  printf("next, on the GPU: python3 tools/tune.py %s --records tuned.tsv; then: tilesmith opt ... --tuned tuned.tsv\n",
         o->out);
  rc = EXIT_OK;
done:
  for (int i = 0; i < built; i++) free(cands[i].mod[0]), free(cands[i].mod[1]);
  session_close(&s);
  return rc;
}
