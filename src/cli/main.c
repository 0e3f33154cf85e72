/*
 * main.c: the `tilesmith` command.
 *
 * Subcommands are rows of one table (name, summary, help text, handler).
 * Options are parsed by hand, GNU style (`--entry NAME` or `--entry=NAME`);
 * a bad option is a usage error (exit 2) with a pointer to `--help`; an error
 * in the user's program or data is exit 1, with the diagnostic already
 * printed by the stage that found it; success is exit 0.
 */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../grad/grad.h"
#include "../train/train.h"
#include "cli.h"


typedef int (*Handler)(Opts *o);
typedef struct Command {
  const char *name, *summary, *usage, *help;
  Handler run;
  bool needs_entry, needs_out;
} Command;

static const Command *cur_cmd;
static bool trains(const Command *c);

int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tilesmith: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nusage: %s\nsee 'tilesmith %s --help'\n", cur_cmd ? cur_cmd->usage : "tilesmith COMMAND ...",
          cur_cmd ? cur_cmd->name : "");
  return EXIT_USAGE;
}

/* ---- one compilation ---- */

void session_open(Session *s) {
  s->arena = arena_new();
  ctx_init(&s->ctx, s->arena, stderr);
  s->ctx.color = isatty(2) && !getenv("NO_COLOR");
  s->ctx.unwind = &s->jb;
  s->prog = (Program){0};
}

void session_close(Session *s) { arena_free(s->arena); }

/* Load the prelude and the file; false (diagnostic printed) on error. */
bool load(Session *s, const char *path) {
  char err[512];
  SrcFile *f = src_load(s->arena, path, err, sizeof err);
  if (!f) {
    fprintf(stderr, "tilesmith: error: %s\n", err);
    return false;
  }
  if (setjmp(s->jb)) return false;
  front_load(&s->ctx, &s->prog, f);
  return true;
}

Graph *elaborate(Session *s, Opts *o, const char *entry) {
  if (setjmp(s->jb)) return NULL;
  for (int i = 0; i < o->nsizes; i++) o->sizes[i].used = false;
  Graph *g = elab_entry(&s->ctx, &s->prog, entry, (Pos){0}, o->sizes, o->nsizes);
  if (o->backward) grad_backward_entry(g, NULL, NULL);
  return g;
}

/* ---- --stats ---- */

/* t0, t1, t2: ts_seconds() at the start, after loading, after elaborating */
static void print_stats(const Session *s, double t0, double t1, double t2, int nodes) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  fprintf(stderr, "stats: load+parse %.1f ms, elaborate %.1f ms, %d declarations, %d graph nodes, "
          "arena %.1f MiB, peak RSS %.1f MiB\n", 1e3 * (t1 - t0), 1e3 * (t2 - t1), s->prog.ndecls, nodes,
          (double)arena_bytes(s->arena) / 1048576.0, (double)ru.ru_maxrss / 1024.0);
}

/* ---- check ---- */

/* Can this declaration be elaborated with no sizes given? */
static bool is_concrete(const Decl *d) {
  for (int i = 0; i < d->nparams; i++) {
    const Binder *b = &d->params[i];
    if (b->implicit) return false; /* shape-generic */
    if (b->deflt) continue;
    if (!b->type) return false;
    switch (b->type->kind) {
    case TY_TENSOR:
    case TY_PARAM:
    case TY_INDEX: break;
    case TY_NAT:
    case TY_INT:
    case TY_FLOAT:
    case TY_SHAPE:
    case TY_LIST:
    case TY_ARROW: return false;
    }
  }
  return true;
}

static int cmd_check(Opts *o) {
  Session s;
  session_open(&s);
  int rc = EXIT_OK, nodes = 0;
  double t0 = ts_seconds(), t1 = t0;
  if (!load(&s, o->file)) rc = EXIT_USER;
  else if (o->entry) {
    t1 = ts_seconds();
    Graph *g = elaborate(&s, o, o->entry);
    if (g) elab_print_signature(stdout, g, o->entry), nodes = g->nnodes;
    else rc = EXIT_USER;
  } else {
    t1 = ts_seconds();
    /* every declaration of the file: concrete ones are elaborated */
    int checked = 0, generic = 0;
    for (int i = 0; i < s.prog.ndecls; i++) {
      const Decl *d = s.prog.decls[i];
      if (d->file->is_prelude || d->is_type) continue; /* types are Lean's */
      if (!is_concrete(d)) {
        generic++;
        printf("%s: generic (check it with --entry %s --size ...)\n", d->name, d->name);
        continue;
      }
      /* each definition's graph lives in an arena of its own, freed at once */
      Arena *scratch = arena_new();
      s.ctx.arena = scratch;
      Graph *g = elaborate(&s, o, d->name);
      if (g) {
        elab_print_signature(stdout, g, d->name);
        checked++;
        nodes += g->nnodes;
      } else {
        rc = EXIT_USER;
      }
      s.ctx.arena = s.arena;
      arena_free(scratch);
    }
    if (rc == EXIT_OK)
      printf("ok: %d definition%s elaborated, %d generic\n", checked, checked == 1 ? "" : "s", generic);
  }
  if (o->stats) print_stats(&s, t0, t1, ts_seconds(), nodes);
  session_close(&s);
  return rc;
}

/* ---- graph ---- */

static int cmd_graph(Opts *o) {
  const char *fmt = o->format ? o->format : "text";
  if (strcmp(fmt, "text") && strcmp(fmt, "dot") && strcmp(fmt, "json"))
    return usage_error("--format must be text, dot or json, not '%s'", fmt);
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Graph *g = load(&s, o->file) ? elaborate(&s, o, o->entry) : NULL;
  if (g && o->rewrite) g = rewrite_graph(&s, o, g);
  if (g) {
    if (!strcmp(fmt, "text")) graph_print_text(stdout, g);
    else if (!strcmp(fmt, "dot")) graph_print_dot(stdout, g);
    else graph_print_json(stdout, g);
    rc = EXIT_OK;
  }
  session_close(&s);
  return rc;
}

/* ---- eval ---- */

static const char *kind_word(ElemKind k) {
  switch (k) {
  case EK_REAL: return "floating-point";
  case EK_INT: return "integer";
  case EK_BOOL: return "boolean";
  }
  return "?";
}

/* Read the --in files into inputs[]; false (message printed) on error. */
bool read_inputs(Opts *o, Graph *g, Tensor **inputs) {
  for (int k = 0; k < o->nins; k++) {
    int i = 0;
    while (i < g->ninputs && strcmp(g->inputs[i]->name, o->ins[k].name) != 0) i++;
    if (i == g->ninputs) {
      fprintf(stderr, "tilesmith: error: --in %s: the entry '%s' has no input named '%s'; its inputs are:",
              o->ins[k].name, o->entry, o->ins[k].name);
      for (int j = 0; j < g->ninputs; j++) fprintf(stderr, " %s", g->inputs[j]->name);
      fputc('\n', stderr);
      return false;
    }
    if (inputs[i]) {
      fprintf(stderr, "tilesmith: error: --in %s is given twice\n", o->ins[k].name);
      return false;
    }
    char err[512], a[256], b[256];
    Tensor *t = npy_read(o->ins[k].path, err, sizeof err);
    if (!t) {
      fprintf(stderr, "tilesmith: error: --in %s=%s: %s\n", o->ins[k].name, o->ins[k].path, err);
      return false;
    }
    inputs[i] = t;
    const Node *n = g->inputs[i];
    if (!shape_equal(&t->shape, &n->shape)) {
      fprintf(stderr, "tilesmith: error: --in %s=%s: the array has shape %s, but '%s' has shape %s\n",
              o->ins[k].name, o->ins[k].path, shape_str(&t->shape, a, sizeof a), n->name,
              shape_str(&n->shape, b, sizeof b));
      return false;
    }
    bool want_int = n->role == ROLE_INDEX;
    if ((t->kind == EK_INT) != want_int || t->kind == EK_BOOL) {
      fprintf(stderr, "tilesmith: error: --in %s=%s: the array holds %s values, but '%s' is %s and needs %s\n",
              o->ins[k].name, o->ins[k].path, kind_word(t->kind), n->name,
              want_int ? "an Index" : n->role == ROLE_PARAM ? "a Param" : "a Tensor",
              want_int ? "int32 or int64 values" : "float32 or float64 values");
      return false;
    }
  }
  return true;
}

static int cmd_eval(Opts *o) {
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  Graph *g = load(&s, o->file) ? elaborate(&s, o, o->entry) : NULL;
  Tensor **inputs = NULL, *out = NULL;
  if (!g) goto done;
  inputs = calloc((size_t)g->ninputs + 1, sizeof *inputs);
  if (!read_inputs(o, g, inputs)) goto done;
  if (setjmp(s.jb)) goto done;
  interp_random_inputs(g, inputs, o->seed, false);
  out = interp_run(g, inputs);
  char err[512], buf[256];
  if (!npy_write(o->out, out, err, sizeof err)) {
    fprintf(stderr, "tilesmith: error: %s\n", err);
    goto done;
  }
  printf("wrote %s: float64 %s\n", o->out, shape_str(&out->shape, buf, sizeof buf));
  rc = EXIT_OK;
done:
  if (inputs)
    for (int i = 0; i < g->ninputs; i++) tensor_free(inputs[i]);
  free(inputs);
  tensor_free(out);
  session_close(&s);
  return rc;
}

/* ---- tiles ---- */

static int cmd_tiles(Opts *o) {
  DType dt;
  if (!opts_dtype(o, &dt)) return EXIT_USAGE;
  Session s;
  session_open(&s);
  int rc = EXIT_USER;
  TileProgram *tp = compile_entry(&s, o, dt, NULL);
  if (tp) {
    if (o->format && !strcmp(o->format, "json")) tile_print_json(stdout, tp);
    else tile_print(stdout, tp);
    rc = EXIT_OK;
  }
  session_close(&s);
  return rc;
}

/* ---- the command table ---- */

static const Command commands[] = {
    {"check", "parse, elaborate and shape-check a file",
     "tilesmith check FILE.lean [--entry NAME] [--size N=4096,D=128]",
     "Parses FILE.lean with the prelude, elaborates and shape-checks it.\n"
     "With --entry, prints the entry's signature with concrete shapes; NAME is\n"
     "a concrete instance (def attention_4k := attention 4 16 4096 128) or a\n"
     "generic definition whose Nat parameters --size binds by name.  Without\n"
     "--entry, every definition that needs no sizes is elaborated and the\n"
     "generic ones are listed.\n",
     cmd_check, false, false},
    {"graph", "print the graph IR of an entry",
     "tilesmith graph FILE.lean --entry NAME [--size ...] [--grad] [--format text|dot|json] [--rewrite [--stats]]",
     "Prints the graph IR of the entry after the prelude is inlined: only\n"
     "primitives remain, each node with its shape (symbolic and concrete) and\n"
     "the source position it came from.  --format text (default), dot\n"
     "(Graphviz) or json.  With --rewrite, the graph after equality saturation\n"
     "with the SAFE rules of 'tilesmith rules' and extraction by the search's\n"
     "IO-aware cost at the entry's sizes: the term 'opt' and 'explain' plan.\n",
     cmd_graph, true, false},
    {"eval", "run the float64 reference interpreter",
     "tilesmith eval FILE.lean --entry NAME [--size ...] [--in NAME=PATH.npy]... [--seed S] --out PATH.npy",
     "Evaluates the entry in float64.  Inputs come from NumPy .npy files\n"
     "(float32/float64 for Tensor and Param, int32/int64 for Index), named by\n"
     "parameter; any not given are drawn at random from --seed (default 0):\n"
     "normal(0, 1) for real inputs, normal(0, 1/fan_in) for a Param that feeds\n"
     "a matmul (a weight, as a network initializes it), uniform over the\n"
     "valid range for indices.\n"
     "The result is written to --out as a float64 .npy file.\n",
     cmd_eval, true, true},
    {"grad", "the gradient of a loss with respect to its Params",
     "tilesmith grad FILE.lean --entry LOSS [--size ...] [--check] [--in NAME=PATH.npy]... [--seed S] [--out DIR]",
     "Builds the gradient of the entry (a loss: one real number) with respect\n"
     "to every Param by reverse-mode differentiation on the graph IR, as\n"
     "nodes of the same primitives, and prints the graph (the loss, then its\n"
     "gradients) with one line per Param naming its gradient's node.\n"
     "--check instead evaluates the gradients in float64 on random inputs\n"
     "(--seed, as eval draws them) and compares up to 24 elements of each\n"
     "Param with central differences; it fails (exit status 1) where the\n"
     "error |analytic - numeric| / max(1, |analytic|, |numeric|) exceeds 1e-6\n"
     "beyond the rounding of the difference itself (4 eps |loss| / h).\n"
     "With --out DIR, the gradients are evaluated in float64 instead, at the\n"
     "--in inputs (the rest drawn from --seed as eval draws them), and written\n"
     "as DIR/NAME.npy per Param (float64).\n"
     "Kinks follow PyTorch: relu'(0) = 0, ties of max, min, amax and amin share\n"
     "the gradient evenly.\n",
     cmd_grad, true, false},
    {"tiles", "print the tile program (kernels) of an entry",
     "tilesmith tiles FILE.lean --entry NAME [--size ...] [--dtype bf16|f16|f32] [--grad] [--format text|json]",
     "Prints the tile program opt emits for the entry: the global tensors,\n"
     "then each kernel with its grid, its tile buffers (shared memory or\n"
     "registers) and its statements (loops, ifs, maps, gemms, reductions,\n"
     "stores).  The program is the searched plan (equality saturation, then\n"
     "the fusion search priced by the cost model); --naive prints the naive\n"
     "lowering instead (one kernel per chain of elementwise and layout ops,\n"
     "per reduction and per matrix product).  --dtype is the storage type of\n"
     "real tensors (default bf16); accumulation is float32.\n",
     cmd_tiles, true, false},
    {"verify", "check the tile program against the graph on small instances",
     "tilesmith verify FILE.lean --entry NAME [--size ...] [--dtype bf16|f16|f32] [--grad] [--seed S] [--trials N] [--format text|json]",
     "Checks the program opt emits: the plan searched at the entry's sizes,\n"
     "carried over to shrunken instances of the same program (dimensions\n"
     "reduced, with and without tails; sizes that change the program's\n"
     "structure, a depth, keep their value), runs it in the tile interpreter\n"
     "with random and adversarial inputs (large logits, ties, rows masked\n"
     "entirely but one, extreme but finite values, and a ramp: magnitudes\n"
     "rising 1 to 4 along each tensor, so a running max moves from tile to\n"
     "tile while every error bound stays tight) and compares each kernel\n"
     "with the float64 graph interpreter, with tolerances per storage type\n"
     "plus a first-order bound of the error float32 evaluation may make in\n"
     "the kernel; each instance's rewritten graph is also checked against its\n"
     "source in float64.  A failure names the kernel, the statement and the\n"
     "first mismatching element.  --naive checks the naive lowering; --grad\n"
     "checks the entry's backward pass, the program opt --grad writes to\n"
     "OUT_backward.py.\n",
     cmd_verify, true, false},
    {"opt", "emit a TileLang or Triton module for an entry",
     "tilesmith opt FILE.lean --entry NAME [--size ...] [--dtype bf16|f16|f32] [--tuned FILE] --target tilelang|triton|best -o OUT.py",
     "Writes one self-contained Python module: the kernels, run(*tensors)\n"
     "taking the entry's tensor arguments in declaration order as PyTorch CUDA\n"
     "tensors and returning the result, reference(*tensors) in plain PyTorch,\n"
     "and a __main__ that checks run against reference in float32 on fresh\n"
     "random inputs and times both.\n"
     "\n"
     "An entry with Nat parameters left free (a generic definition without\n"
     "--size for them) gets a module over those sizes: run() reads them from\n"
     "its arguments' shapes (sizes={...} for any no shape gives), compiles\n"
     "each new set of sizes on first use with this tilesmith ($TILESMITH\n"
     "overrides) and caches the module in memory and on disk ($TILESMITH_CACHE,\n"
     "default ~/.cache/tilesmith/jit), keyed by source, entry, sizes, dtype,\n"
     "target, options, device and versions; `python3 OUT.py --size ...\n"
     "[--compile-only ARCH]` checks or builds one set of sizes.\n"
     "\n"
     "--grad also writes OUT_backward.py, the backward pass searched and\n"
     "lowered like any entry (the gradients of sum(output * grad_out) with\n"
     "respect to every real input, recomputing the forward), and gives OUT.py\n"
     "apply(...): run() as a torch.autograd.Function whose backward launches\n"
     "those kernels.\n",
     cmd_opt, true, false},
    {"tune", "write the cost model's best schedules of an entry, for timing on the GPU",
     "tilesmith tune FILE.lean --entry NAME [--size ...] [--dtype bf16|f16|f32] [--gpu h200] [--top K] -o DIR",
     "Searches the entry's plan as opt does and writes into DIR the modules of\n"
     "its K best schedules by the cost model (default 3; each in TileLang and\n"
     "Triton) and manifest.json with the program's key.  On a machine with the\n"
     "GPU, `python3 tools/tune.py DIR --records FILE` checks and times them and\n"
     "appends the fastest correct one to FILE; `opt`, `explain`, `tiles` and\n"
     "`verify` given --tuned FILE (or TILESMITH_TUNED=FILE) then use its\n"
     "schedule, and `opt --target best` its target, on any machine.\n",
     cmd_tune, true, false},
    {"explain", "why opt emits what it emits: kernels, fusions, costs",
     "tilesmith explain FILE.lean --entry NAME [--size ...] [--dtype bf16|f16|f32] [--gpu h200] [--grad] [--format json | --json]",
     "Compiles the entry as opt does and reports each kernel: the graph nodes\n"
     "it computes and their source lines, its grid and loops, the role of each\n"
     "axis (grid, stream, whole, inner, split across blocks), its loop-carried\n"
     "states and the law that streams them, bytes moved, FLOPs and the cost\n"
     "model's predicted time; then the global buffers, the rewrites used, the\n"
     "search's statistics, the predicted total against the roofline floor and\n"
     "the runner-up plans the search priced.  --grad explains the entry's\n"
     "backward pass (what opt --grad writes to OUT_backward.py).  --format\n"
     "json writes one object.\n",
     cmd_explain, true, false},
    {"hparams", "the parametrization under which hyperparameters transfer",
     "tilesmith hparams FILE.lean --entry MODEL --width SYM[=BASE][,SYM[=BASE]...] [--depth SYM[=BASE]] [--size ...]\n"
     "                 [--optimizer adamw|muon|auto] [--alpha 1|0.5] [--json] [--emit-pytorch OUT.py]",
     "Classifies every Param of the entry from how its dimensions depend on the\n"
     "width symbols (a dimension written with one, such as 4 * D, grows with it)\n"
     "and the depth symbol (a Param stacked [L, ...] and read as W[l] inside\n"
     "`layers`), and from the op its values reach first (a matrix product names\n"
     "its fan-in and fan-out; a gather makes it an embedding; else a vector):\n"
     "input, hidden, readout, vector or embedding, in the repeated block or not.\n"
     "Then derives, relative to the base sizes (SYM=BASE; default the entry's own),\n"
     "each Param's initialization, learning-rate, output, weight-decay and\n"
     "Adam-epsilon multipliers under muP with depth scaling (CompleteP, --alpha 1,\n"
     "the default; depth-muP, --alpha 0.5) and each residual block's multiplier;\n"
     "with --optimizer muon (auto: muon where there are hidden matrices) hidden\n"
     "matrices take Muon's spectral scaling and the rest AdamW.  Prints a table\n"
     "with the reason for each row; --json writes the same as one object;\n"
     "--emit-pytorch writes a module with init_() and param_groups() to call\n"
     "on a PyTorch model whose tensors carry the Params' names.\n",
     cmd_hparams, true, false},
    {"train", "train a loss entry on the CPU",
     "tilesmith train FILE.lean --entry LOSS [--size ...] (--data NAME=PATH.npy... | --text PATH) [--steps N] [--batch N] [--lr X]\n"
     "                 [--optimizer sgd|adamw|lion|muon] [--param sp|derived --width D=BASE [--depth L=BASE]]\n"
     "                 [--lr-schedule constant|cosine|linear|wsd] [--warmup N] [--wd W] [--clip C] [--seed S] [--csv OUT.csv]\n"
     "                 [--lr-mult NAME=X]... [--init DIR] [--save DIR] [--exec f32|f64] [--profile]",
     "Trains the entry (a loss: one real number) on the CPU: the loss and its\n"
     "gradients (tilesmith grad) evaluated in one pass of the float32\n"
     "executor each step (sgemm; --exec f64: the float64 interpreter, for\n"
     "exact comparisons), the Params initialized and updated as the\n"
     "parametrization says: standard (--param sp, the default: 1/sqrt(fan_in)\n"
     "for matrices, gains 1, biases 0, every multiplier 1, and --wd on the\n"
     "matrices only: gains and biases are not decayed, as nanoGPT and most\n"
     "training code group them) or derived from the\n"
     "base sizes as 'tilesmith hparams' prints it (--param derived with --width\n"
     "and --depth): per-Param learning-rate, weight-decay and epsilon\n"
     "multipliers, the readout's output multiplier and each residual block's\n"
     "branch multiplier.  Optimizers as PyTorch defines them: sgd (momentum\n"
     "0.9), adamw, lion, muon (hidden matrices; AdamW at --adamw-lr for the\n"
     "rest).  The data: --data NAME=PATH.npy for each Tensor and Index input\n"
     "(rows along the first dimension, batches of the input's first size,\n"
     "shuffled per epoch) or --text PATH (windows of bytes: ids and targets\n"
     "shifted by one).  Prints the loss every --log-every steps (default 10)\n"
     "and writes every logged step to --csv.  Deterministic for a --seed.\n"
     "--init DIR reads Params from DIR/NAME.npy where present; --save DIR\n"
     "writes the trained ones there (float64).\n",
     cmd_train, true, false},
    {"sweep", "train a grid of widths, depths and learning rates",
     "tilesmith sweep FILE.lean --entry LOSS --width D=BASE --widths 64,128,... --lrs LO:HI:N [--depth L=BASE --depths 2,4,...]\n"
     "                 [--seeds K] [--jobs J] [--param sp|derived] [--coord LR] (--data NAME=PATH.npy... | --text PATH) [train's options]\n"
     "                 --csv OUT.csv [--plot OUT.png]",
     "Trains the loss entry (as 'tilesmith train') for every width, depth,\n"
     "learning rate and seed of the grid, under the standard and the derived\n"
     "parametrization (--width and --depth give the bases; --param sp or\n"
     "--param derived trains that one only, so that each can have a grid of\n"
     "its own around its optimum), --jobs at a time\n"
     "(default: every core), appending each result (the mean loss of the last\n"
     "fifth of the steps) to --csv as it finishes, with a fingerprint of its\n"
     "settings (steps, optimizer, data, sizes, schedule); a sweep run again\n"
     "with the same CSV resumes from the rows of the same settings and refuses\n"
     "a CSV of other settings or one that is not a sweep's.  Then prints each width's and depth's optimal learning\n"
     "rate (the vertex of a parabola in log2 lr through the best point and its\n"
     "neighbours) for both parametrizations and how far it moves over the\n"
     "grid, with the 5th-95th percentile of that move over draws of the\n"
     "seeds, and with --plot draws loss\n"
     "against learning rate, one curve per width, standard beside derived\n"
     "(gnuplot).  Under the derived parametrization the optimum should stay\n"
     "put as the width grows; under the standard one it moves.  --coord LR\n"
     "runs a coordinate check instead: at that one learning rate, each matrix\n"
     "product's output RMS before the first update and after --steps, per\n"
     "width (CSV, table, --plot against the width).\n",
     cmd_sweep, true, false},
    {"rules", "list the rewrite rules",
     "tilesmith rules",
     "Lists the rewrite rules of the equality saturation (src/rewrite/rules.def):\n"
     "name, family, SAFE or UNSAFE (may worsen numerics: no command applies\n"
     "it), the pattern lhs => rhs, its condition and what it says.\n",
     cmd_rules, false, false},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static const char *common_options =
    "options:\n"
    "  --entry NAME          the definition to compile\n"
    "  --size N=4096,D=128   bind Nat parameters of the entry by name (repeatable)\n"
    "  -h, --help            show this help\n";

static bool trains(const Command *c) { return c->run == cmd_train || c->run == cmd_sweep; }

static void print_main_help(FILE *f) {
  fprintf(f, "tilesmith %s: a tensor-program superoptimizer\n\nusage: tilesmith COMMAND FILE.lean [options]\n\ncommands:\n",
          TS_VERSION);
  for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'tilesmith COMMAND --help' describes a command's options.\n"
             "Exit status: 0 on success, 1 on an error in the program or its data (an option that\n"
             "names what the program lacks, such as an entry, a size, an input or a runner-up plan, is\n"
             "found against the program and counts here), 2 on bad usage (an option malformed or missing).\n");
}

/* the commands that compile the entry to a tile program */
static bool compiles(const Command *c) {
  return c->run == cmd_tiles || c->run == cmd_verify || c->run == cmd_opt || c->run == cmd_explain ||
         c->run == cmd_tune;
}

static void print_cmd_help(const Command *c) {
  printf("usage: %s\n\n%s\n%s", c->usage, c->help, c->run == cmd_rules ? "options:\n  -h, --help            show this help\n" : common_options);
  if (c->run == cmd_check) printf("  --stats               print timings and peak memory to stderr\n");
  if (c->run == cmd_graph)
    printf("  --format FMT          text, dot or json\n"
           "  --rewrite             saturate with the rewrite rules, then extract\n"
           "  --stats               with --rewrite: the runner's iterations to stderr\n");
  if (c->run == cmd_graph || c->run == cmd_explain || c->run == cmd_tiles || c->run == cmd_verify)
    printf("  --json                the same as --format json\n");
  if (compiles(c))
    printf("  --dtype T             storage type: bf16 (default), f16 or f32\n"
           "  --naive               the naive lowering: no rewriting, no search\n"
           "  --candidate K         the search's K-th runner-up plan instead of its choice\n"
           "                        (explain lists them; for timing the cost model's alternatives)\n"
           "  --search-budget N     kernels the search may price before it stops with the best plan so\n"
           "                        far (default %d; explain says how many it priced): the plan\n"
           "                        depends on the program and this budget, not on the machine\n"
           "  --schedule S          fix schedule choices of the fused kernels, e.g.\n"
           "                        stream=128,rows=128,threads=256,stages=3,splits=4 (the stream\n"
           "                        loop's tile, block tile rows and cols, threads, pipeline depth,\n"
           "                        blocks the stream is split across; copy=1|0: tile loads as bulk\n"
           "                        copies (TMA: TileLang T.copy, Triton tensor descriptors) or\n"
           "                        element-wise; store=1|0: a product's final tile\n"
           "                        through shared memory (a TMA store) or by each thread); the rest\n"
           "                        the cost model picks\n"
           "  --gpu G               the cost model's GPU profile: a100, h100 or h200 (default)\n",
           SEARCH_BUDGET);
  if (c->run == cmd_explain || c->run == cmd_tiles || c->run == cmd_verify)
    printf("  --format F            text (default) or json\n");
  if (c->run == cmd_verify)
    printf("  --seed S              seed of the random inputs (default 0)\n"
           "  --trials N            random trials per instance (default 3)\n");
  if (compiles(c) && c->run != cmd_tune)
    printf("  --tuned FILE          use the schedule measured for this program in FILE\n"
           "                        (tilesmith tune; default $TILESMITH_TUNED)\n");
  if (c->run == cmd_opt)
    printf("  --target T            tilelang, triton, or best (the target --tuned measured fastest)\n"
           "  -o, --out OUT.py      where to write the module\n"
           "  --grad                also the backward pass (OUT_backward.py), apply() and\n"
           "                        register_autograd() with autograd\n");
  if (c->run == cmd_graph || c->run == cmd_tiles || c->run == cmd_verify || c->run == cmd_explain)
    printf("  --grad                the entry's backward pass instead (what opt --grad writes\n"
           "                        to OUT_backward.py: the gradients of sum(output * grad_out))\n");
  if (c->run == cmd_tune)
    printf("  --top K               schedules to write (default 3, at most 9)\n"
           "  -o, --out DIR         where to write the modules and manifest.json\n");
  if (c->run == cmd_grad)
    printf("  --check               compare with central differences on random inputs\n"
           "  --in NAME=PATH.npy    with --out: an input by parameter name (repeatable)\n"
           "  --seed S              seed for inputs not given (default 0)\n"
           "  --out DIR             write each Param's gradient as DIR/NAME.npy\n");
  if (c->run == cmd_hparams)
    printf("  --width D=128         the width symbol and its base size (more symbols that\n"
           "                        grow with it after commas: D=128,F=352)\n"
           "  --depth L=2           the number of residual blocks and its base\n"
           "  --optimizer O         adamw (default), muon (hidden matrices; AdamW for the rest) or auto\n"
           "  --alpha A             depth exponent: 1 (CompleteP, default) or 0.5 (depth-muP)\n"
           "  --json                the table as JSON\n"
           "  --emit-pytorch OUT.py a module with init_() and param_groups() for PyTorch\n");
  if (c->run == cmd_sweep)
    printf("  --width D=BASE        the width symbol and the derived parametrization's base\n"
           "                        (more symbols after commas grow with it: D=64,F=256 trains\n"
           "                        F = 256·w/64 at width w)\n"
           "  --widths 64,128,...   the widths trained\n"
           "  --depth L=BASE, --depths 2,4,...  the depth symbol, its base and the depths trained\n"
           "  --lrs LO:HI:N         N learning rates log-spaced from LO to HI (or a list)\n"
           "  --seeds K             seeds per point (default 1)\n"
           "  --jobs J              trainings at a time (default: the cores)\n"
           "  --plot OUT.png        loss against learning rate per width (gnuplot)\n"
           "  --coord LR            a coordinate check instead: each product's output RMS\n"
           "                        after --steps at LR, by width (the CSV and --plot show it)\n"
           "  and train's options below\n");
  if (trains(c))
    printf("  --data NAME=PATH.npy  rows of a Tensor or Index input (repeatable)\n"
           "  --text PATH           a byte corpus: windows for the ids and targets Index inputs\n"
           "  --steps N             optimizer steps (default 100)\n"
           "  --batch N             rows a step: binds the size the data inputs' first dimension names\n"
           "  --lr X                base learning rate (default 1e-3)\n"
           "  --optimizer O         sgd, adamw (default), lion or muon\n"
           "  --adamw-lr X          with muon: AdamW's learning rate for the rest\n"
           "  --lr-mult NAME=X      that Param's learning rate times X on top of the parametrization's\n"
           "                        (repeatable); X a number, or width^E / depth^E: the width or\n"
           "                        depth over its base (--width/--depth SYM=BASE), to the power E\n"
           "  --param P             sp (default) or derived (with --width D=BASE [--depth L=BASE])\n"
           "  --alpha A             depth exponent of the derived parametrization: 1 or 0.5\n"
           "  --lr-schedule S       constant (default), cosine, linear or wsd (warmup-stable-decay)\n"
           "  --warmup N            linear warmup steps\n"
           "  --wd W                weight decay (decoupled; L2 for sgd), on matrices, not on gains and biases\n"
           "  --clip C              clip the global gradient norm at C\n"
           "  --seed S              seed of the initialization and the batch order (default 0)\n"
           "  --exec E              f32 (default: the float32 executor, sgemm) or f64 (the float64 interpreter)\n"
           "  --log-every K         print and log every K steps (default 10)\n"
           "  --csv OUT.csv         write the logged steps\n"
           "  --init DIR, --save DIR  read / write Params as DIR/NAME.npy\n");
  if (c->run == cmd_train)
    printf("  --profile             at the end, where a step's time went, and its products timed\n"
           "                        alone in sgemm (the same shapes): the step's share of sgemm's rate\n");
  if (c->run == cmd_eval)
    printf("  --in NAME=PATH.npy    an input by parameter name (repeatable)\n"
           "  --seed S              seed for inputs not given (default 0)\n"
           "  --out PATH.npy        where to write the result\n");
}

static bool parse_u64(const char *s, uint64_t *v) {
  if (!*s || *s == '-' || *s == '+') return false;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return false;
  *v = x;
  return true;
}

/* --size A=1,B=2 */
static int parse_sizes(Opts *o, char *spec) {
  for (char *tok = strtok(spec, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    uint64_t v;
    if (!eq || eq == tok) return usage_error("--size expects NAME=VALUE[,NAME=VALUE...], not '%s'", tok);
    *eq = 0;
    if (!parse_u64(eq + 1, &v) || v > (uint64_t)1 << 40)
      return usage_error("--size %s: '%s' is not a size (a whole number from 0 to 2^40)", tok, eq + 1);
    for (int i = 0; i < o->nsizes; i++)
      if (!strcmp(o->sizes[i].name, tok)) return usage_error("--size %s is given twice", tok);
    if (o->nsizes == 64) return usage_error("too many --size bindings (at most 64)");
    o->sizes[o->nsizes++] = (SizeArg){tok, (int64_t)v, false};
  }
  return EXIT_OK;
}

/* The value of option `name` at argv[*i], as `--name VALUE` or `--name=VALUE`. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *matched) {
  size_t n = strlen(name);
  *matched = false;
  if (strncmp(argv[*i], name, n) != 0) return NULL;
  if (argv[*i][n] == '=') {
    *matched = true;
    return argv[*i] + n + 1;
  }
  if (argv[*i][n] != 0) return NULL;
  *matched = true;
  if (*i + 1 >= argc) return NULL;
  return argv[++*i];
}

/* train's and sweep's numeric options, by table: -1 when argv[*i] is none
   of them, else EXIT_OK or the usage error's status. */
static int number_opt(Opts *o, int argc, char **argv, int *i) {
  /* a learning rate must be above 0 (0 had meant "the default" and trained
     at 1e-3), a step count at least 1; every value finite */
  static const struct { const char *name; bool integer, sweep_only, above_lo; size_t at; double lo, hi; } opts[] = {
      {"--steps", true, false, false, offsetof(Opts, steps), 1, 1e8},
      {"--batch", true, false, false, offsetof(Opts, batch), 1, 1e8},
      {"--warmup", true, false, false, offsetof(Opts, warmup), 0, 1e8},
      {"--log-every", true, false, false, offsetof(Opts, log_every), 0, 1e8},
      {"--lr", false, false, true, offsetof(Opts, lr), 0, 1e10},
      {"--adamw-lr", false, false, true, offsetof(Opts, lr_adam), 0, 1e10},
      {"--wd", false, false, false, offsetof(Opts, wd), 0, 1e10},
      {"--clip", false, false, false, offsetof(Opts, clip), 0, 1e10},
      {"--seeds", true, true, false, offsetof(Opts, sweep_seeds), 1, 64},
      {"--jobs", true, true, false, offsetof(Opts, jobs), 1, 64},
  };
  for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
    if (opts[k].sweep_only && cur_cmd->run != cmd_sweep) continue;
    bool m;
    const char *v = opt_value(argc, argv, i, opts[k].name, &m);
    if (!v && !m) continue;
    char *end = NULL;
    double x = v ? strtod(v, &end) : NAN;
    bool low_ok = opts[k].above_lo ? x > opts[k].lo : x >= opts[k].lo;
    if (!v || *end || !low_ok || !(x <= opts[k].hi) || (opts[k].integer && x != floor(x)))
      return opts[k].integer ? usage_error("%s needs a whole number from %g to %g", opts[k].name, opts[k].lo, opts[k].hi)
                             : usage_error("%s needs a number %s %g and at most %g", opts[k].name,
                                           opts[k].above_lo ? "above" : "from", opts[k].lo, opts[k].hi);
    char *field = (char *)o + opts[k].at;
    if (!opts[k].integer) *(double *)field = x;
    else if (opts[k].sweep_only) *(int *)field = (int)x;
    else *(int64_t *)field = (int64_t)x;
    return EXIT_OK;
  }
  return -1;
}

/* --lr-mult NAME=X: X a positive number, or width^E / depth^E. */
static int parse_lr_mult(Opts *o, const char *v) {
  const char *eq = v ? strchr(v, '=') : NULL;
  if (!eq || eq == v || !eq[1])
    return usage_error("--lr-mult expects NAME=X (a Param's learning rate times X; X a number, width^E or depth^E)");
  if (o->nlr_mults == 16) return usage_error("too many --lr-mult (at most 16)");
  struct LrMult *l = &o->lr_mults[o->nlr_mults];
  const char *x = eq + 1;
  char *end = NULL;
  l->factor = 1, l->base = 0, l->power = 0;
  if (!strncmp(x, "width^", 6) || !strncmp(x, "depth^", 6)) {
    l->base = x[0];
    l->power = strtod(x + 6, &end);
    if (end == x + 6 || *end || !isfinite(l->power) || fabs(l->power) > 4)
      return usage_error("--lr-mult %s: the power after %.6s needs a number from -4 to 4", v, x);
  } else {
    l->factor = strtod(x, &end);
    if (end == x || *end || !(l->factor > 0) || !(l->factor <= 1e6))
      return usage_error("--lr-mult %s: X needs a number above 0 and at most 1e6, or width^E or depth^E", v);
  }
  for (int k = 0; k < o->nlr_mults; k++)
    if (strlen(o->lr_mults[k].name) == (size_t)(eq - v) && !strncmp(o->lr_mults[k].name, v, (size_t)(eq - v)))
      return usage_error("--lr-mult %.*s is given twice", (int)(eq - v), v);
  l->name = strndup(v, (size_t)(eq - v));
  o->nlr_mults++;
  return EXIT_OK;
}

static int parse_args(Opts *o, int argc, char **argv) {
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v;
    bool m;
    int num;
    if ((v = opt_value(argc, argv, &i, "--entry", &m)) || m) {
      if (!v) return usage_error("--entry needs a definition name");
      if (o->entry) return usage_error("--entry is given twice (%s, %s)", o->entry, v);
      o->entry = v;
    } else if ((v = opt_value(argc, argv, &i, "--size", &m)) || m) {
      if (!v) return usage_error("--size needs NAME=VALUE");
      int rc = parse_sizes(o, (char *)v);
      if (rc) return rc;
    } else if ((cur_cmd->run == cmd_check || cur_cmd->run == cmd_graph) && !strcmp(a, "--stats")) {
      o->stats = true;
    } else if (cur_cmd->run == cmd_graph && !strcmp(a, "--rewrite")) {
      o->rewrite = true;
    } else if (compiles(cur_cmd) &&
               !strcmp(a, "--naive")) {
      o->naive = true;
    } else if (compiles(cur_cmd) && ((v = opt_value(argc, argv, &i, "--candidate", &m)) || m)) {
      uint64_t k;
      if (!v || !parse_u64(v, &k) || k < 1 || k > SEARCH_MAX_CANDS)
        return usage_error("--candidate needs a runner-up's rank, 1 to %d (explain lists them)", SEARCH_MAX_CANDS);
      o->candidate = (int)k;
    } else if (compiles(cur_cmd) && ((v = opt_value(argc, argv, &i, "--search-budget", &m)) || m)) {
      uint64_t k;
      if (!v || !parse_u64(v, &k) || k < 1 || k > 1000000)
        return usage_error("--search-budget needs a count of kernels to price, 1 to 1000000 (default %d)", SEARCH_BUDGET);
      o->search_budget = (int)k;
    } else if (compiles(cur_cmd) && ((v = opt_value(argc, argv, &i, "--schedule", &m)) || m)) {
      char why[160];
      if (!v) return usage_error("--schedule needs KEY=VALUE,... (keys: " SCHEDULE_KEYS ")");
      if (!schedule_parse(v, &o->schedule, why, sizeof why)) return usage_error("--schedule: %s", why);
      o->has_schedule = true;
      o->schedule_text = v;
    } else if (compiles(cur_cmd) &&
               ((v = opt_value(argc, argv, &i, "--gpu", &m)) || m)) {
      if (!v || !(o->gpu_profile = gpu_find(v))) return usage_error("--gpu needs a100, h100 or h200");
      o->gpu = v;
    } else if (compiles(cur_cmd) &&
               ((v = opt_value(argc, argv, &i, "--dtype", &m)) || m)) {
      if (!v) return usage_error("--dtype needs bf16, f16 or f32");
      o->dtype = v;
    } else if ((cur_cmd->run == cmd_graph || cur_cmd->run == cmd_explain || cur_cmd->run == cmd_tiles ||
                cur_cmd->run == cmd_verify) &&
               ((v = opt_value(argc, argv, &i, "--format", &m)) || m)) {
      if (!v) return usage_error(cur_cmd->run == cmd_graph ? "--format needs text, dot or json" : "--format needs text or json");
      if (cur_cmd->run != cmd_graph && strcmp(v, "text") && strcmp(v, "json"))
        return usage_error("--format must be text or json, not '%s'", v);
      o->format = v;
    } else if ((cur_cmd->run == cmd_graph || cur_cmd->run == cmd_explain || cur_cmd->run == cmd_tiles ||
                cur_cmd->run == cmd_verify) &&
               !strcmp(a, "--json")) {
      o->format = "json"; /* --format json, as agents spell it */
    } else if ((cur_cmd->run == cmd_eval || cur_cmd->run == cmd_grad) && ((v = opt_value(argc, argv, &i, "--in", &m)) || m)) {
      const char *eq = v ? strchr(v, '=') : NULL;
      if (!eq || eq == v || !eq[1]) return usage_error("--in expects NAME=PATH.npy");
      if (o->nins == 64) return usage_error("too many --in files (at most 64)");
      o->ins[o->nins].name = strndup(v, (size_t)(eq - v));
      o->ins[o->nins++].path = eq + 1;
    } else if (cur_cmd->run == cmd_opt && ((v = opt_value(argc, argv, &i, "--target", &m)) || m)) {
      if (!v) return usage_error("--target needs tilelang or triton");
      o->target = v;
    } else if ((cur_cmd->run == cmd_opt || cur_cmd->run == cmd_tune) &&
               (((v = opt_value(argc, argv, &i, "-o", &m)) || m) || ((v = opt_value(argc, argv, &i, "--out", &m)) || m))) {
      if (!v) return usage_error("-o needs a path");
      o->out = v;
    } else if (compiles(cur_cmd) && cur_cmd->run != cmd_tune && ((v = opt_value(argc, argv, &i, "--tuned", &m)) || m)) {
      if (!v) return usage_error("--tuned needs a file of tuned schedules (tilesmith tune)");
      char why[512];
      if (!tuned_file_ok(v, why, sizeof why)) return usage_error("%s", why);
      o->tuned = v;
    } else if (cur_cmd->run == cmd_tune && ((v = opt_value(argc, argv, &i, "--top", &m)) || m)) {
      uint64_t t;
      if (!v || !parse_u64(v, &t) || t < 1 || t > 9) return usage_error("--top needs a number from 1 to 9");
      o->top = (int)t;
    } else if (cur_cmd->run == cmd_verify && ((v = opt_value(argc, argv, &i, "--trials", &m)) || m)) {
      uint64_t t;
      if (!v || !parse_u64(v, &t) || t < 1 || t > 1000) return usage_error("--trials needs a number from 1 to 1000");
      o->trials = (int)t;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--data", &m)) || m)) {
      const char *eq = v ? strchr(v, '=') : NULL;
      if (!eq || eq == v || !eq[1]) return usage_error("--data expects NAME=PATH.npy");
      if (o->nins == 64) return usage_error("too many --data arrays (at most 64)");
      o->ins[o->nins].name = strndup(v, (size_t)(eq - v));
      o->ins[o->nins++].path = eq + 1;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--lr-mult", &m)) || m)) {
      int rc = parse_lr_mult(o, v);
      if (rc) return rc;
    } else if (cur_cmd->run == cmd_sweep && (((v = opt_value(argc, argv, &i, "--widths", &m)) || m))) {
      if (!v) return usage_error("--widths needs sizes such as 64,128,256");
      o->sweep_widths = v;
    } else if (cur_cmd->run == cmd_sweep && (((v = opt_value(argc, argv, &i, "--depths", &m)) || m))) {
      if (!v) return usage_error("--depths needs sizes such as 2,4,8");
      o->sweep_depths = v;
    } else if (cur_cmd->run == cmd_sweep && (((v = opt_value(argc, argv, &i, "--lrs", &m)) || m))) {
      if (!v) return usage_error("--lrs needs learning rates (1e-4,1e-3) or a log-spaced range LO:HI:N");
      o->sweep_lrs = v;
    } else if (cur_cmd->run == cmd_sweep && (((v = opt_value(argc, argv, &i, "--coord", &m)) || m))) {
      char *end;
      o->coord_lr = v ? strtod(v, &end) : 0;
      if (!v || *end || !(o->coord_lr > 0) || !isfinite(o->coord_lr)) return usage_error("--coord needs a learning rate");
    } else if (cur_cmd->run == cmd_sweep && (((v = opt_value(argc, argv, &i, "--plot", &m)) || m))) {
      if (!v) return usage_error("--plot needs a path for the PNG");
      o->plot = v;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--init", &m)) || m)) {
      if (!v) return usage_error("--init needs a directory of NAME.npy Params");
      o->init_dir = v;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--save", &m)) || m)) {
      if (!v) return usage_error("--save needs a directory");
      o->save_dir = v;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--text", &m)) || m)) {
      if (!v) return usage_error("--text needs a file of text");
      o->text = v;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--csv", &m)) || m)) {
      if (!v) return usage_error("--csv needs a path");
      o->out = v;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--exec", &m)) || m)) {
      if (!v || (strcmp(v, "f32") && strcmp(v, "f64"))) return usage_error("--exec needs f32 or f64");
      o->exec_f64 = !strcmp(v, "f64");
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--param", &m)) || m)) {
      if (!v || (strcmp(v, "sp") && strcmp(v, "derived"))) return usage_error("--param needs sp or derived");
      o->param_derived = !strcmp(v, "derived");
      o->param_given = true;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--lr-schedule", &m)) || m)) {
      TrainSchedule sc;
      if (!train_schedule_parse(v, &sc)) return usage_error("--lr-schedule needs %s", train_schedule_list());
      o->lr_schedule = v;
    } else if (trains(cur_cmd) && (num = number_opt(o, argc, argv, &i)) >= 0) {
      if (num) return num;
    } else if (trains(cur_cmd) && ((v = opt_value(argc, argv, &i, "--optimizer", &m)) || m)) {
      TrainOptimizer to;
      if (!train_optimizer_parse(v, &to)) return usage_error("--optimizer needs %s", train_optimizer_list());
      o->optimizer = v;
    } else if ((cur_cmd->run == cmd_hparams || trains(cur_cmd)) && ((v = opt_value(argc, argv, &i, "--width", &m)) || m)) {
      if (!v) return usage_error("--width needs SYM[=BASE] (the width symbol and its base size)");
      o->width_spec = v;
    } else if ((cur_cmd->run == cmd_hparams || trains(cur_cmd)) && ((v = opt_value(argc, argv, &i, "--depth", &m)) || m)) {
      if (!v) return usage_error("--depth needs SYM[=BASE] (the number of residual blocks and its base)");
      o->depth_spec = v;
    } else if (cur_cmd->run == cmd_hparams && ((v = opt_value(argc, argv, &i, "--optimizer", &m)) || m)) {
      if (!v || (strcmp(v, "adamw") && strcmp(v, "muon") && strcmp(v, "auto")))
        return usage_error("--optimizer needs adamw, muon or auto");
      o->optimizer = v;
    } else if ((cur_cmd->run == cmd_hparams || trains(cur_cmd)) && ((v = opt_value(argc, argv, &i, "--alpha", &m)) || m)) {
      if (!v || (strcmp(v, "1") && strcmp(v, "0.5") && strcmp(v, "1.0")))
        return usage_error("--alpha needs 1 (CompleteP) or 0.5 (depth-muP)");
      o->alpha = atof(v);
      o->has_alpha = true;
    } else if (cur_cmd->run == cmd_train && !strcmp(a, "--profile")) {
      o->profile = true;
    } else if (cur_cmd->run == cmd_hparams && !strcmp(a, "--json")) {
      o->format = "json";
    } else if (cur_cmd->run == cmd_hparams && ((v = opt_value(argc, argv, &i, "--emit-pytorch", &m)) || m)) {
      if (!v) return usage_error("--emit-pytorch needs a path for the Python module");
      o->emit_pytorch = v;
    } else if (cur_cmd->run == cmd_grad && !strcmp(a, "--check")) {
      o->check = true;
    } else if ((cur_cmd->run == cmd_opt || cur_cmd->run == cmd_verify || cur_cmd->run == cmd_tiles || cur_cmd->run == cmd_graph ||
                cur_cmd->run == cmd_explain) &&
               !strcmp(a, "--grad")) {
      o->grad = true;
      o->backward = cur_cmd->run != cmd_opt;
    } else if ((cur_cmd->run == cmd_eval || cur_cmd->run == cmd_verify || cur_cmd->run == cmd_grad || trains(cur_cmd)) &&
               ((v = opt_value(argc, argv, &i, "--seed", &m)) || m)) {
      if (!v || !parse_u64(v, &o->seed)) return usage_error("--seed needs a whole number");
    } else if ((cur_cmd->run == cmd_eval || cur_cmd->run == cmd_grad) && ((v = opt_value(argc, argv, &i, "--out", &m)) || m)) {
      if (!v) return usage_error("--out needs a path");
      o->out = v;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option '%s'", a);
    } else if (!o->file) {
      o->file = a;
    } else {
      return usage_error("unexpected argument '%s' (the file is already '%s')", a, o->file);
    }
  }
  if (!o->file && cur_cmd->run != cmd_rules) return usage_error("no input file");
  if (compiles(cur_cmd) && cur_cmd->run != cmd_tune) { /* options that choose the program, one way each */
    if (o->naive && (o->candidate || o->has_schedule || o->tuned))
      return usage_error("--naive is the naive lowering: --%s chooses among the search's plans",
                         o->candidate ? "candidate" : o->has_schedule ? "schedule" : "tuned");
    if (o->tuned && (o->candidate || o->has_schedule))
      return usage_error("--tuned fixes the measured schedule of the search's plan: leave out --%s",
                         o->candidate ? "candidate" : "schedule");
  }
  if (cur_cmd->run == cmd_rules && (o->file || o->entry || o->nsizes))
    return usage_error("rules lists the rewrite rules: it takes no file or options");
  if (cur_cmd->needs_entry && !o->entry) return usage_error("--entry NAME is required");
  if (cur_cmd->needs_out && !o->out) return usage_error("--out PATH.npy is required");
  if (cur_cmd->run == cmd_opt && (!o->target || !o->out)) return usage_error("--target and -o are required");
  if (cur_cmd->run == cmd_tune && !o->out) return usage_error("-o DIR is required");
  if (cur_cmd->run == cmd_hparams && !o->width_spec) return usage_error("--width SYM[=BASE] is required");
  if (cur_cmd->run == cmd_grad && o->check && (o->out || o->nins))
    return usage_error("--check draws its own inputs: it does not take --in or --out");
  /* an output written over the program it comes from */
  const char *outs[2] = {o->out, o->plot};
  struct stat a, b;
  for (int k = 0; k < 2; k++)
    if (outs[k] && o->file && stat(outs[k], &a) == 0 && stat(o->file, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
      return usage_error("%s is the program's own file: the output would overwrite it", outs[k]);
  return EXIT_OK;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_main_help(stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
    print_main_help(stdout);
    return EXIT_OK;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("tilesmith %s\n", TS_VERSION);
    return EXIT_OK;
  }
  for (int i = 0; i < NCOMMANDS; i++) {
    if (strcmp(argv[1], commands[i].name) != 0) continue;
    cur_cmd = &commands[i];
    for (int k = 2; k < argc; k++)
      if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
        print_cmd_help(cur_cmd);
        return EXIT_OK;
      }
    Opts o = {0};
    int rc = parse_args(&o, argc, argv);
    if (rc == EXIT_OK) rc = cur_cmd->run(&o);
    for (int k = 0; k < o.nins; k++) free((void *)o.ins[k].name);
    for (int k = 0; k < o.nlr_mults; k++) free((void *)o.lr_mults[k].name);
    return rc;
  }
  fprintf(stderr, "tilesmith: unknown command '%s'\n\n", argv[1]);
  print_main_help(stderr);
  return EXIT_USAGE;
}
