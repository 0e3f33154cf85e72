/*
 * cmd_verify.c: `tilesmith verify`, checking the tile program of an entry
 * against its graph on small instances (the work is in src/verify).  The
 * session holds the loaded program; verify_entry elaborates each shrunken
 * instance in an arena of its own and prints one line per trial.
 */
#include "../verify/verify.h"
#include "cli.h"

int cmd_verify(Opts *o) {
  VerifyOpts vo = {.seed = o->seed,
                   .trials = o->trials,
                   .out = stdout,
                   .json = o->format && !strcmp(o->format, "json"),
                   .grad = o->backward};
  if (!opts_dtype(o, &vo.dtype)) return EXIT_USAGE;
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  if (o->naive) {
    if (!load(&s, o->file)) goto done;
  } else {
    /* the plan opt would emit at the entry's sizes; verify checks it on
       shrunken instances (sizes the entry leaves open get those of --size) */
    Compiled cp;
    if (!compile_entry(&s, o, vo.dtype, &cp)) goto done;
    vo.plan = cp.plan;
    vo.bind = o->bind;
    vo.nbind = o->nbind;
    if (!vo.json)
      printf("plan: %d kernel%s (searched at the entry's sizes; verified on shrunken instances)\n", cp.tp->kernels.len,
             cp.tp->kernels.len == 1 ? "" : "s");
  }
  rc = verify_entry(&s.ctx, &s.prog, o->entry, o->sizes, o->nsizes, &vo) ? EXIT_USER : EXIT_OK;
done:
  session_close(&s);
  return rc;
}
