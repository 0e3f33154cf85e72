/*
 * cli.h: what the command handlers share (main.c parses the options and
 * dispatches; each cmd_*.c file holds commands of its own).
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "../front/front.h"
#include "../interp/interp.h"
#include "../search/search.h"
#include "../tile/tile.h"
#include <string.h>

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_USAGE = 2 };

#define TS_VERSION "0.1.0"
extern const char ts_source_id[]; /* a fingerprint of the sources this binary was built from (Makefile) */

typedef struct Opts {
  const char *file;
  const char *entry;
  SizeArg sizes[64];
  int nsizes;
  const char *format;
  struct { const char *name, *path; bool used; } ins[64];
  int nins;
  uint64_t seed;
  const char *out;
  bool stats;
  const char *dtype;      /* tiles, verify, opt */
  const char *target;     /* opt: tilelang or triton */
  int trials;             /* verify: random trials per instance (0 = default) */
  bool rewrite;           /* graph: equality saturation and extraction first */
  bool naive;             /* tiles, verify, opt, explain: the naive lowering, no search */
  int candidate;          /* tiles, verify, opt, explain: the search's k-th runner-up (0: its choice) */
  int search_budget;      /* tiles, verify, opt, explain, tune: kernels the search may price (0: SEARCH_BUDGET) */
  Schedule schedule;      /* tiles, verify, opt, explain: --schedule (when has_schedule) */
  bool has_schedule;
  const char *schedule_text; /* --schedule's value as given */
  const char *tuned;      /* --tuned FILE: schedules measured on a GPU (tuned.c) */
  int top;                /* tune: schedules to write (--top) */
  bool check;             /* grad: against central differences (--check) */
  bool grad;              /* opt: also the backward pass, and autograd; tiles, verify:
                             the backward pass instead of the entry (--grad) */
  bool backward;          /* elaborate() returns the entry's backward pass */
  bool quiet_schedule;    /* tune: no warning for a schedule that fits no kernel */
  const char *gpu;        /* the GPU profile the cost model uses */
  const Gpu *gpu_profile;
  SizeArg bind[64];       /* the entry's Nat sizes (entry_bindings), for the rewrite's cost */
  int nbind;
  const char *width_spec; /* hparams: --width SYM[=BASE][,...] */
  const char *depth_spec; /* hparams: --depth SYM[=BASE] */
  const char *optimizer;  /* hparams: adamw, muon or auto */
  double alpha;           /* hparams: --alpha (has_alpha) */
  bool has_alpha;
  const char *emit_pytorch; /* hparams: --emit-pytorch OUT.py */
  int64_t steps;          /* train */
  int64_t batch;          /* train, sweep: --batch N (the size the data inputs' first dimension names) */
  double lr, lr_adam, wd, clip;
  int64_t warmup, log_every;
  const char *lr_schedule;
  const char *text;       /* train: a byte corpus for ids and targets */
  bool param_derived;     /* train: --param derived */
  bool param_given;       /* sweep: --param given (only that parametrization is trained) */
  bool profile;           /* train: --profile (where the step's time goes, against sgemm alone) */
  bool exec_f64;          /* train, sweep: --exec f64 (the float64 interpreter, not the float32 executor) */
  const char *init_dir, *save_dir; /* train: --init DIR, --save DIR */
  const char *sweep_widths, *sweep_depths, *sweep_lrs; /* sweep: the grid */
  const char *sweep_width, *sweep_depth; /* sweep: the symbols (from --width, --depth) */
  int sweep_seeds, jobs;
  const char *plot;       /* sweep: --plot OUT.png */
  double coord_lr;        /* sweep: --coord LR, a coordinate check at one learning rate */
  /* train, sweep: --lr-mult NAME=X, a Param's learning rate times X on top
     of the parametrization's; X a number, or width^E / depth^E (the width
     or depth over its base, to the power E) */
  struct LrMult { const char *name; double factor; char base; double power; } lr_mults[16];
  int nlr_mults;
} Opts;

/* One compilation: its arena, context and program. */
typedef struct Session {
  Arena *arena;
  Ctx ctx;
  jmp_buf jb;
  Program prog;
} Session;

void session_open(Session *s);
void session_close(Session *s);
/* Load the prelude and the file; false (diagnostic printed) on error. */
bool load(Session *s, const char *path);
/* Elaborate `entry` with o's sizes; NULL (diagnostic printed) on error. */
Graph *elaborate(Session *s, Opts *o, const char *entry);
/* A usage error (exit status 2), with the current command's usage line. */
int usage_error(const char *fmt, ...) TS_PRINTF(1, 2);

/* A schedule measured on a GPU (tuned.c). */
typedef struct TunedRec {
  char target[16];
  char schedule[160];      /* --schedule's spelling, "-" for the cost model's own */
  double measured_us, predicted_us;
  char device[64], versions[160], date[32];
} TunedRec;
/* The key of a program's records: its graph (no source positions), storage type, GPU profile. */
uint64_t tune_key(const Graph *g, DType dt, const Gpu *gpu);
/* The last record of key in the file at path: 1 found, 0 none (or no file), -1 unreadable. */
int tuned_lookup(const char *path, uint64_t key, TunedRec *out);
/* A file --tuned names: readable, its lines comments or records (else why). */
bool tuned_file_ok(const char *path, char *why, size_t len);
/* --tuned, else $TILESMITH_TUNED, else NULL. */
const char *tuned_path(const Opts *o);

/* The program opt emits (compile.c): the searched plan, or with --naive the
   naive lowering; NULL (printed) on an internal error. */
typedef struct Compiled {
  Graph *orig;           /* the entry's graph */
  Graph *g;              /* the graph planned: after equality saturation */
  TileProgram *tp;
  Plan *plan;            /* NULL with --naive */
  SearchStats stats;
  RewriteInfo rewrite;
  bool tuned;            /* compile_entry: the schedule is a tuned record's (rec) */
  TunedRec rec;
} Compiled;
TileProgram *compile_program(Opts *o, Graph *g, DType dt, Compiled *out);
/* The entry's Nat sizes with --size applied (for o->bind); 0 if it has none. */
int entry_bindings(Session *s, Opts *o, SizeArg *out, int max);
/* Load o->file, elaborate o->entry, bind its sizes, take the schedule of
   its --tuned record (if any) and compile it as opt does
   (compile_program); NULL (diagnostic printed) on any error. */
TileProgram *compile_entry(Session *s, Opts *o, DType dt, Compiled *out);
/* --dtype (bf16 by default) into *dt; false (a usage error printed) if unknown. */
bool opts_dtype(const Opts *o, DType *dt);
/* The --size bindings as modules and manifests write them: "B=2,N=8". */
const char *sizes_text(Arena *a, const Opts *o);
/* The options besides the file, entry, sizes, dtype and target that chose
   a module (" --naive", " --schedule copy=1", ...; "" for none), for its
   header's command. */
const char *options_text(Arena *a, const Opts *o);

int cmd_verify(Opts *o);   /* cmd_verify.c */
int cmd_tune(Opts *o);     /* cmd_tune.c */
int cmd_grad(Opts *o);     /* cmd_grad.c */
int cmd_hparams(Opts *o);  /* cmd_hparams.c */
int cmd_train(Opts *o);    /* cmd_train.c */
int cmd_sweep(Opts *o);    /* cmd_sweep.c */
struct TrainData;
struct TrainOpts;
/* train and sweep (cmd_train.c): the entry's data from --data/--text (false,
   message printed, on an error; *text is the corpus to free), and the
   training options. */
bool train_load_data(Opts *o, Graph *g, struct TrainData *data, unsigned char **text);
void train_opts(const Opts *o, struct TrainOpts *to);
/* train's and sweep's options that only make sense together (a warmup
   shorter than the run; a warning for --adamw-lr without Muon): EXIT_OK or
   the usage error's status */
int train_opts_check(const Opts *o);
/* --lr-mult applied to a derived plan: false (with a message) when a name
   is no Param of the entry or a width^E / depth^E has no base. */
struct HpPlan;
bool train_lr_mults_apply(const Opts *o, struct HpPlan *pl);
struct HpOpts;
/* hparams and train: load, elaborate with --width/--depth (cmd_hparams.c);
   EXIT_OK or the exit status with the message printed; hparams_free
   releases what it parsed. */
int hparams_setup(Session *s, Opts *o, struct HpOpts *ho, Graph **g);
bool nat_named(const SizeArg *have, int nhave, const char *sym, const char *flag, const char *entry);
void hparams_free(struct HpOpts *ho);
/* Read the --in files into inputs[] (main.c); false (message printed) on error. */
bool read_inputs(Opts *o, Graph *g, Tensor **inputs);
int cmd_opt(Opts *o);      /* cmd_opt.c */
int cmd_explain(Opts *o);  /* cmd_explain.c */
int cmd_rules(Opts *o);    /* cmd_rewrite.c */
/* graph --rewrite: the term the search plans (search_rewrite at the entry's
   sizes; --stats: the runner's table to stderr); NULL (diagnostic printed) on error. */
Graph *rewrite_graph(Session *s, Opts *o, Graph *g);

#endif
