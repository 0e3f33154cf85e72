/* cmd_opt.c: `tilesmith opt` (being written). */
#include "cli.h"

int cmd_opt(Opts *o) {
  (void)o;
  fprintf(stderr, "tilesmith: opt is not built yet\n");
  return 1;
}
