/*
 * fuzz_front.c: the libFuzzer target over lexing, parsing, elaboration and,
 * for tiny shapes, the interpreter, the lowering to tiles (whose result must
 * pass the tile checker) and the tile interpreter (which must not fault).
 *
 * Each input is a user file parsed after the prelude.  Every declaration in
 * it is elaborated, generic ones with their Nat parameters bound to small
 * sizes, and graphs with few elements are also run by the interpreter.  The
 * limits are tightened so that one input takes milliseconds; a crash, a
 * sanitizer report, a leak or a timeout is a bug.
 */
#include <stdlib.h>
#include <string.h>

#include "../../src/front/front.h"
#include "../../src/interp/interp.h"
#include "../../src/tile/tile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_decl(Ctx *c, Program *prog, const Decl *d, jmp_buf *jb) {
  SizeArg sizes[16];
  int ns = 0;
  for (int i = 0; i < d->nparams && ns < 16; i++) {
    const Binder *b = &d->params[i];
    if (b->type && b->type->kind == TY_NAT && !b->deflt)
      sizes[ns++] = (SizeArg){b->name, 1 + (i % 3), false};
  }
  /* heap, and volatile pointers: both survive the longjmp of an error */
  Tensor **inputs = calloc(64, sizeof *inputs);
  Graph *volatile g = NULL;
  Tensor *volatile out = NULL;
  if (setjmp(*jb) == 0) {
    g = elab_entry(c, prog, d->name, d->pos, sizes, ns);
    if (!graph_check(g, NULL)) abort();
    int64_t total = 0;
    for (int i = 0; i < g->nnodes; i++) total += shape_numel(&g->nodes[i]->shape);
    if (total <= 4096 && g->ninputs <= 64) {
      interp_random_inputs(g, inputs, 1, false);
      out = interp_run(g, inputs);
      /* the naive lowering must give a valid tile program that runs without
         an out-of-bounds access */
      TileProgram *tp = tile_lower(g, DT_BF16);
      if (!tile_check(tp, stderr)) abort();
      TileFault fault = {0};
      Tensor *t = tile_run(tp, inputs, NULL, &fault);
      if (!t && fault.hit && fault.kernel) abort();
      tensor_free(t);
    }
  }
  if (g)
    for (int i = 0; i < g->ninputs && i < 64; i++) tensor_free(inputs[i]);
  tensor_free(out);
  free(inputs);
}

/* The prelude is parsed once, into an arena that lives as long as the
   process; each input's program starts from a copy of its declarations. */
static Program prelude;

static void load_prelude(void) {
  static Arena *pa;
  if (pa) return;
  pa = arena_new();
  Ctx c;
  ctx_init(&c, pa, stderr);
  jmp_buf jb;
  c.unwind = &jb;
  if (setjmp(jb)) abort(); /* the prelude must parse */
  front_load(&c, &prelude, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load_prelude();
  Arena *a = arena_new();
  Ctx c;
  ctx_init(&c, a, NULL);
  c.max_steps = 200000;
  c.max_nodes = 20000;
  c.max_depth = 200;
  c.max_elems = 1 << 16;
  jmp_buf jb;
  c.unwind = &jb;
  Program prog = {0};
  prog.ndecls = prelude.ndecls;
  prog.decls = arena_alloc(a, sizeof(Decl *) * (size_t)(prelude.ndecls + 1));
  memcpy(prog.decls, prelude.decls, sizeof(Decl *) * (size_t)prelude.ndecls);
  SrcFile *f = src_from_string(a, "fuzz.lean", (const char *)data, size);
  if (setjmp(jb) == 0) {
    parse_file(&c, f, &prog);
    program_index(&c, &prog);
    int n = 0;
    for (int i = 0; i < prog.ndecls && n < 16; i++) {
      const Decl *d = prog.decls[i];
      if (d->file->is_prelude) continue;
      n++;
      c.steps = 0;
      c.depth = 0;
      run_decl(&c, &prog, d, &jb);
    }
  }
  arena_free(a);
  return 0;
}
