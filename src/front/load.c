/*
 * load.c: reading the prelude and the user's file into one Program.
 *
 * The prelude (lean/Tilesmith.lean, embedded in the binary at build time)
 * is parsed first, so the user's declarations come after it and may use it,
 * exactly as a Lean file that imports Tilesmith may.
 */
#include "front.h"

void front_load(Ctx *c, Program *prog, const SrcFile *user) {
  SrcFile *pre = src_from_string(c->arena, "lean/Tilesmith.lean", ts_prelude_text, ts_prelude_len);
  pre->is_prelude = true;
  parse_file(c, pre, prog);
  if (user) parse_file(c, user, prog);
}
