/*
 * cmd_opt.c: `tilesmith opt`: elaborate the entry, lower it to a tile
 * program, check the program's invariants, and write one self-contained
 * Python module for the target (TileLang or Triton).  Any failure (a bad
 * option value, an error in the program, a construct the target cannot
 * express, an unwritable file) is reported on stderr with exit status 1
 * (2 for usage), and no partial module is left behind.
 *
 * An entry with Nat parameters left free (a generic definition, no --size
 * for them) gets a module that compiles per shape at call time
 * (src/emit/dynamic.c); its inputs' and output's symbolic shapes are read
 * from two elaborations at different sizes and must agree.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../emit/emit.h"
#include "../grad/grad.h"
#include "cli.h"

/* Write the module (dyn: over free sizes) to path; false with the error
   printed and no file left behind. */
static bool write_module(const char *path, const TileProgram *tp, Target target, const EmitInfo *info,
                         const DynInfo *dyn) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  char err[512];
  bool ok = dyn ? emit_dynamic_module(f, tp, target, dyn, err, sizeof err)
                : emit_module(f, tp, target, info, err, sizeof err);
  if (fclose(f) != 0 && ok) {
    snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(errno));
    ok = false;
  }
  if (!ok) {
    fprintf(stderr, "tilesmith: error: %s: %s\n", target_name(target), err);
    remove(path);
  }
  return ok;
}

/* ---- --grad: the backward pass beside the module, and apply() ---- */

/* Write OUT_backward.py (the entry's backward pass, searched and lowered
   as an entry of its own) and append apply() to the module at o->out,
   whose program is fwd.  False with the error printed. */
static bool write_backward(Opts *o, DType dt, Target target, const TileProgram *fwd, char *said, size_t saidlen) {
  size_t n = strlen(o->out);
  size_t stem = n > 3 && !strcmp(o->out + n - 3, ".py") ? n - 3 : n;
  char *path = malloc(stem + 16);
  if (!path) return false;
  snprintf(path, stem + 16, "%.*s_backward.py", (int)stem, o->out);
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  Session s;
  session_open(&s);
  bool ok = false;
  Graph *g = load(&s, o->file) ? elaborate(&s, o, o->entry) : NULL;
  if (!g || setjmp(s.jb)) goto done;
  Node **diff;
  int nd;
  grad_backward_entry(g, &diff, &nd);
  Compiled cp;
  TileProgram *tp = compile_program(o, g, dt, &cp);
  if (!tp) goto done;
  EmitInfo info = {.file = o->file, .entry = g->entry, .sizes = sizes_text(s.arena, o),
                   .options = options_text(s.arena, o), .source = cp.orig};
  if (!write_module(path, tp, target, &info, NULL)) goto done;
  /* the differentiated inputs, as positions among run()'s arguments */
  int *pos = arena_alloc(s.arena, sizeof(int) * (size_t)(nd ? nd : 1));
  for (int k = 0; k < nd; k++)
    for (int i = 0; i < fwd->g->ninputs; i++)
      if (!strcmp(fwd->g->inputs[i]->name, diff[k]->name)) pos[k] = i;
  FILE *f = fopen(o->out, "a");
  char err[512];
  ok = f && emit_autograd(f, fwd, target, base, pos, nd, err, sizeof err);
  if (f && fclose(f) != 0 && ok) {
    snprintf(err, sizeof err, "cannot write %s: %s", o->out, strerror(errno));
    ok = false;
  }
  if (!ok) {
    if (!f) snprintf(err, sizeof err, "cannot write %s: %s", o->out, strerror(errno));
    fprintf(stderr, "tilesmith: error: %s\n", err);
    remove(path);
    goto done;
  }
  snprintf(said, saidlen, "wrote %s: %s module for the backward pass of %s, %d kernel%s; apply() in %s\n", path,
           target_name(target), o->entry, tp->kernels.len, tp->kernels.len == 1 ? "" : "s", o->out);
done:
  session_close(&s);
  free(path);
  return ok;
}

/* ---- an entry with free sizes: a module that compiles per shape ---- */

#define DYN_MAX_NATS 64
static const int64_t dyn_probe[2] = {16, 24}; /* the free sizes' values at the two elaborations */

/* The entry's Nat parameters in order, value -1 for those no instance fixes
   and no --size binds (-1 returned on an error, printed); the names are
   the caller's to free. */
static int entry_nats(Opts *o, SizeArg *nats) {
  Session s;
  session_open(&s);
  int n = -1;
  if (load(&s, o->file) && !setjmp(s.jb)) {
    s.ctx.unwind = &s.jb;
    n = elab_entry_nats(&s.ctx, &s.prog, o->entry, nats, DYN_MAX_NATS);
    for (int i = 0; i < n; i++) nats[i].name = strdup(nats[i].name); /* past the session */
    for (int i = 0; i < n; i++)
      for (int k = 0; k < o->nsizes; k++)
        if (!strcmp(o->sizes[k].name, nats[i].name)) nats[i].value = o->sizes[k].value;
  }
  session_close(&s);
  return n;
}

/* Is dimension d the same function of the sizes in both elaborations: one
   symbolic form that evaluates to each one's size, or a literal in both? */
static bool dim_agrees(const Dim *a, const Dim *b, SizeArg *bind[2], int nbind) {
  if (!a->sym || !b->sym) return !a->sym && !b->sym && a->n == b->n;
  int64_t va, vb;
  return !strcmp(a->sym, b->sym) && dim_value_at(a, bind[0], nbind, &va) && va == a->n &&
         dim_value_at(b, bind[1], nbind, &vb) && vb == b->n;
}

static bool shape_agrees(const char *what, const Shape *a, const Shape *b, SizeArg *bind[2], int nbind,
                         const char *sizes) {
  bool same = a->rank == b->rank;
  int d = 0;
  while (same && d < a->rank && dim_agrees(&a->d[d], &b->d[d], bind, nbind)) d++;
  if (same && d == a->rank) return true;
  fprintf(stderr, "tilesmith: error: the shape of %s depends on the free sizes (%s) in a way tilesmith cannot "
          "write as an expression of them; bind them with --size\n", what, sizes);
  return false;
}

static int opt_dynamic(Opts *o, DType dt, Target target, SizeArg *nats, int nn) {
  if (o->candidate || o->has_schedule)
    return usage_error("--candidate and --schedule need concrete sizes: bind every Nat parameter with --size");
  /* elaborate twice, the free sizes at two values, to read and check the
     symbolic shapes of the inputs and the output */
  Session s[2];
  Graph *g[2] = {NULL, NULL};
  SizeArg bind[2][DYN_MAX_NATS], *bp[2] = {bind[0], bind[1]};
  Opts po[2];
  int rc = EXIT_USER;
  for (int p = 0; p < 2; p++) session_open(&s[p]);
  char *freelist = arena_strdup(s[0].arena, "");
  for (int i = 0; i < nn; i++)
    if (nats[i].value < 0) freelist = arena_printf(s[0].arena, "%s%s%s", freelist, *freelist ? ", " : "", nats[i].name);
  for (int p = 0; p < 2; p++) {
    po[p] = *o;
    for (int i = 0; i < nn; i++) {
      bind[p][i] = nats[i];
      if (nats[i].value >= 0) continue;
      bind[p][i].value = dyn_probe[p];
      po[p].sizes[po[p].nsizes++] = bind[p][i];
    }
  }
  for (int p = 0; p < 2; p++) {
    g[p] = load(&s[p], o->file) ? elaborate(&s[p], &po[p], o->entry) : NULL;
    if (!g[p]) {
      fprintf(stderr, "tilesmith: note: opt learns the shapes of '%s' by elaborating it with its free sizes (%s) "
              "at %lld and at %lld; bind them with --size where those values do not suit it\n", o->entry, freelist,
              (long long)dyn_probe[0], (long long)dyn_probe[1]);
      goto done;
    }
  }
  if (g[0]->ninputs != g[1]->ninputs) {
    fprintf(stderr, "tilesmith: error: '%s' takes a number of inputs that depends on its free sizes (%s); bind them "
            "with --size\n", o->entry, freelist);
    goto done;
  }
  for (int i = 0; i < g[0]->ninputs; i++) {
    char *what = arena_printf(s[0].arena, "the input '%s'", g[0]->inputs[i]->name);
    if (!shape_agrees(what, &g[0]->inputs[i]->shape, &g[1]->inputs[i]->shape, bp, nn, freelist)) goto done;
  }
  if (!shape_agrees("the output", &g[0]->output->shape, &g[1]->output->shape, bp, nn, freelist)) goto done;
  if (setjmp(s[0].jb)) goto done;
  TileProgram *tp = tile_lower(g[0], dt); /* for the Python names and dtypes only */
  if (!tp) goto done;
  /* the cache key's tilesmith: its version and the sources it was built from */
  char version[96];
  snprintf(version, sizeof version, "%s+%s", TS_VERSION, ts_source_id);
  DynInfo info = {.file = o->file, .entry = o->entry, .nats = nats, .nnats = nn, .version = version};
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  info.tilesmith = n > 0 ? exe : "tilesmith";
  const char *options[8];
  char tuned[4096];
  int no = 0;
  if (o->naive) options[no++] = "--naive";
  if (o->gpu) options[no++] = "--gpu", options[no++] = o->gpu;
  if (o->tuned) {
    if (!realpath(o->tuned, tuned)) {
      fprintf(stderr, "tilesmith: error: --tuned %s: %s\n", o->tuned, strerror(errno));
      goto done;
    }
    options[no++] = "--tuned", options[no++] = tuned;
  }
  info.options = options, info.noptions = no;
  char err[512];
  const SrcFile *src = src_load(s[0].arena, o->file, err, sizeof err);
  if (!src) {
    fprintf(stderr, "tilesmith: error: %s\n", err);
    goto done;
  }
  info.source = (const unsigned char *)src->text, info.source_len = src->len;
  if (!write_module(o->out, tp, target, NULL, &info)) goto done;
  printf("wrote %s: %s module for %s over its free sizes %s, compiled per shape at call time\n", o->out,
         target_name(target), o->entry, freelist);
  rc = EXIT_OK;
done:
  session_close(&s[0]);
  session_close(&s[1]);
  return rc;
}

int cmd_opt(Opts *o) {
  DType dt;
  Target target;
  if (!opts_dtype(o, &dt)) return EXIT_USAGE;
  bool best = !strcmp(o->target, "best");
  if (!best && !target_parse(o->target, &target))
    return usage_error("--target must be tilelang, triton or best, not '%s'", o->target);
  SizeArg nats[DYN_MAX_NATS];
  int nn = entry_nats(o, nats), nfree = 0;
  if (nn < 0) return EXIT_USER;
  for (int i = 0; i < nn; i++) nfree += nats[i].value < 0;
  if (nfree) {
    int rc = best     ? usage_error("--target best needs concrete sizes (the tuned record of one shape)")
             : o->grad ? usage_error("--grad needs concrete sizes: bind every Nat parameter with --size")
                       : opt_dynamic(o, dt, target, nats, nn);
    for (int i = 0; i < nn; i++) free((char *)nats[i].name);
    return rc;
  }
  for (int i = 0; i < nn; i++) free((char *)nats[i].name);
  if (best && !tuned_path(o)) return usage_error("--target best needs --tuned FILE (or TILESMITH_TUNED)");
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Compiled cp;
  TileProgram *tp = compile_entry(&s, o, dt, &cp);
  if (!tp) goto done;
  if (best && !(cp.tuned && target_parse(cp.rec.target, &target))) {
    const Gpu *gpu = o->gpu_profile ? o->gpu_profile : gpu_get(GPU_H200);
    if (cp.tuned)
      fprintf(stderr, "tilesmith: error: %s: the tuned record of '%s' names the target '%s', neither tilelang nor triton\n",
              tuned_path(o), o->entry, cp.rec.target);
    else
      fprintf(stderr, "tilesmith: error: %s has no tuned record of '%s' for this program at these sizes, storage type "
                      "%s and GPU profile %s (a record is keyed by all four: tilesmith tune, then tools/tune.py)\n",
              tuned_path(o), o->entry, dtype_name(dt), gpu->name);
    goto done;
  }
  if (cp.tuned)
    printf("schedule %s, tuned on %s (%.1f us, %s, %s)\n", cp.rec.schedule, cp.rec.device, cp.rec.measured_us,
           cp.rec.target, cp.rec.date);
  EmitInfo info = {.file = o->file, .entry = o->entry, .sizes = sizes_text(s.arena, o),
                   .options = options_text(s.arena, o), .source = cp.orig};
  if (!write_module(o->out, tp, target, &info, NULL)) goto done;
  /* said once both modules are written: a backward pass that fails
     removes the forward module, which is then not reported written */
  char said[2 * PATH_MAX + 256] = "";
  if (o->grad && !write_backward(o, dt, target, tp, said, sizeof said)) {
    remove(o->out);
    goto done;
  }
  printf("wrote %s: %s module for %s, %d kernel%s\n%s", o->out, target_name(target), o->entry, tp->kernels.len,
         tp->kernels.len == 1 ? "" : "s", said);
  rc = EXIT_OK;
done:
  session_close(&s);
  return rc;
}
