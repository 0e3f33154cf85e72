/* cmd_verify.c: `tilesmith verify` (being written). */
#include "cli.h"

int cmd_verify(Opts *o) {
  (void)o;
  fprintf(stderr, "tilesmith: verify is not built yet\n");
  return 1;
}
