/*
 * cmd_rewrite.c: `tilesmith rules` (the rewrite rule table) and the
 * `--rewrite` step of `tilesmith graph` (saturate with the SAFE rules,
 * extract by the default cost; the work is in src/rewrite).
 */
#include "../rewrite/rewrite.h"
#include "cli.h"

/* The term the search plans (search_rewrite at the entry's sizes), so that
   what `graph --rewrite` prints is what `opt` and `explain` start from. */
Graph *rewrite_graph(Session *s, Opts *o, Graph *g) {
  if (setjmp(s->jb)) return NULL;
  o->nbind = entry_bindings(s, o, o->bind, 64);
  return search_rewrite_report(g, o->bind, o->nbind, o->stats ? stderr : NULL);
}

int cmd_rules(Opts *o) {
  (void)o;
  int unsafe = 0;
  for (int i = 0; i < rw_nrules(); i++) {
    const RwRule *r = rw_rule(i);
    unsafe += r->unsafe;
    printf("%-22s %-13s %s\n", r->name, r->family, r->unsafe ? "UNSAFE" : "SAFE");
    printf("    %s  =>  %s\n", r->lhs, r->rhs);
    if (r->cond) printf("    if %s\n", r->cond);
    printf("    %s\n", r->doc);
  }
  printf("%d rules: %d SAFE (every command applies them), %d UNSAFE (no command applies them: they are kept, "
         "proven and tested for the day a numerics-aware search may)\n", rw_nrules(),
         rw_nrules() - unsafe, unsafe);
  return EXIT_OK;
}
