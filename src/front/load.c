/*
 * load.c: reading the prelude and the user's file into one Program.
 *
 * The prelude (lean/Tilesmith.lean, embedded in the binary at build time)
 * is parsed first, so the user's declarations come after it and may use it,
 * exactly as a Lean file that imports Tilesmith may.  Then every
 * declaration's names are resolved (resolve.c), so a misspelt name is an
 * error for every command, whether or not its definition is elaborated.
 */
#include <string.h>

#include "front.h"

static uint64_t name_hash(const char *s) { return hash_bytes(s, strlen(s), 0); }

void program_index(Ctx *c, Program *prog) {
  int nb = 64;
  while (nb < 2 * prog->ndecls) nb *= 2;
  prog->nbuckets = nb;
  prog->chain_head = arena_alloc(c->arena, sizeof(int) * (size_t)nb);
  prog->chain_next = arena_alloc(c->arena, sizeof(int) * (size_t)(prog->ndecls + 1));
  for (int b = 0; b < nb; b++) prog->chain_head[b] = -1;
  for (int i = 0; i < prog->ndecls; i++) {
    prog->chain_next[i] = -1;
    if (!prog->decls[i]->name) continue;
    size_t b = name_hash(prog->decls[i]->name) & (size_t)(nb - 1);
    prog->chain_next[i] = prog->chain_head[b];
    prog->chain_head[b] = i;
  }
}

const Decl *program_lookup(const Program *prog, const char *name, int limit, int *index) {
  if (!prog->nbuckets) return NULL;
  size_t b = name_hash(name) & (size_t)(prog->nbuckets - 1);
  for (int i = prog->chain_head[b]; i >= 0; i = prog->chain_next[i])
    if (i < limit && strcmp(prog->decls[i]->name, name) == 0) {
      *index = i;
      return prog->decls[i];
    }
  return NULL;
}

void front_load(Ctx *c, Program *prog, const SrcFile *user) {
  SrcFile *pre = src_from_string(c->arena, "lean/Tilesmith.lean", ts_prelude_text, ts_prelude_len);
  pre->is_prelude = true;
  parse_file(c, pre, prog);
  if (user) parse_file(c, user, prog);
  program_index(c, prog);
  resolve_program(c, prog);
}
