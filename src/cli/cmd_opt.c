/*
 * cmd_opt.c: `tilesmith opt`: elaborate the entry, lower it to a tile
 * program, check the program's invariants, and write one self-contained
 * Python module for the target (TileLang or Triton).  Any failure (a bad
 * option value, an error in the program, a construct the target cannot
 * express, an unwritable file) is reported on stderr with exit status 1
 * (2 for usage), and no partial module is left behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../emit/emit.h"
#include "cli.h"

int cmd_opt(Opts *o) {
  DType dt;
  Target target;
  if (!opts_dtype(o, &dt)) return EXIT_USAGE;
  bool best = !strcmp(o->target, "best");
  if (!best && !target_parse(o->target, &target))
    return usage_error("--target must be tilelang, triton or best, not '%s'", o->target);
  if (best && !tuned_path(o)) return usage_error("--target best needs --tuned FILE (or TILESMITH_TUNED)");
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Compiled cp;
  TileProgram *tp = compile_entry(&s, o, dt, &cp);
  if (!tp) goto done;
  if (best && !(cp.tuned && target_parse(cp.rec.target, &target))) {
    fprintf(stderr, "tilesmith: error: %s has no tuned record of '%s' at these sizes (tilesmith tune, then tools/tune.py)\n",
            tuned_path(o), o->entry);
    goto done;
  }
  if (cp.tuned)
    printf("schedule %s, tuned on %s (%.1f us, %s, %s)\n", cp.rec.schedule, cp.rec.device, cp.rec.measured_us,
           cp.rec.target, cp.rec.date);
  /* the --size bindings, for the module's header */
  char *sizes = arena_strdup(s.arena, "");
  for (int i = 0; i < o->nsizes; i++)
    sizes = arena_printf(s.arena, "%s%s%s=%lld", sizes, i ? "," : "", o->sizes[i].name, (long long)o->sizes[i].value);
  EmitInfo info = {.file = o->file, .entry = o->entry, .sizes = sizes};
  FILE *f = fopen(o->out, "w");
  if (!f) {
    fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", o->out, strerror(errno));
    goto done;
  }
  char err[512];
  bool ok = emit_module(f, tp, target, &info, err, sizeof err);
  if (fclose(f) != 0 && ok) {
    snprintf(err, sizeof err, "cannot write %s: %s", o->out, strerror(errno));
    ok = false;
  }
  if (!ok) {
    fprintf(stderr, "tilesmith: error: %s: %s\n", target_name(target), err);
    remove(o->out);
    goto done;
  }
  printf("wrote %s: %s module for %s, %d kernel%s\n", o->out, target_name(target), o->entry, tp->kernels.len,
         tp->kernels.len == 1 ? "" : "s");
  rc = EXIT_OK;
done:
  session_close(&s);
  return rc;
}
