/*
 * cmd_rewrite.c: `tilesmith rules` (the rewrite rule table) and the
 * `--rewrite` step of `tilesmith graph` (saturate with the SAFE rules,
 * extract by the default cost; the work is in src/rewrite).
 */
#include "../rewrite/rewrite.h"
#include "cli.h"

Graph *rewrite_graph(Session *s, Graph *g, bool stats) {
  EGraph *volatile eg = NULL;
  if (setjmp(s->jb)) {
    eg_free(eg);
    return NULL;
  }
  eg = eg_from_graph(g);
  const EgReport *rep = eg_run(eg, NULL);
  const char *const *used;
  int nused;
  Graph *out = eg_extract(eg, eg_root(eg), NULL, NULL, &used, &nused);
  if (stats) {
    eg_report_print(stderr, rep);
    fprintf(stderr, "rewrites used:");
    for (int i = 0; i < nused; i++) fprintf(stderr, " %s", used[i]);
    fprintf(stderr, "%s\n", nused ? "" : " none");
  }
  eg_free(eg);
  return out;
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
  printf("%d rules: %d SAFE (applied by default), %d UNSAFE (only when enabled by name)\n", rw_nrules(),
         rw_nrules() - unsafe, unsafe);
  return EXIT_OK;
}
