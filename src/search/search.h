/*
 * search.h: the plan search (search.c) and its statistics.
 */
#ifndef TS_SEARCH_H
#define TS_SEARCH_H

#include "../cost/cost.h"
#include "../front/front.h"
#include "../rewrite/rewrite.h"
#include "plan.h"

typedef enum { STOP_SATURATED, STOP_SWEEPS, STOP_BUDGET, STOP_TIME } SearchStop;
const char *search_stop_name(SearchStop s);

/* A schedule the user fixes (--schedule; an autotuner's choice): each
   field 0 is left to the cost model.  It applies to every fused kernel
   with the axis it names; a kernel no candidate of which fits keeps the
   cost model's choice (counted in SearchStats.sched_unmet). */
typedef struct Schedule {
  int64_t stream;       /* the streamed axis' tile (keys of attention, K of a matmul) */
  int64_t rows, cols;   /* the block tile of the output's last two grid axes */
  int threads;
  int stages;           /* software pipeline depth of the stream loop */
  int64_t splits;       /* blocks the stream is split across (1: none) */
  int copy;             /* tile loads as bulk copies (TMA): 1 on, 2 off, 0 the default */
  int store;            /* a product's final tile through shared memory (a TMA store): likewise */
} Schedule;
/* Parse "stream=128,rows=64,threads=256,stages=3,splits=1,copy=0,store=1";
   false with a message in why (naming the bad key or value). */
#define SCHEDULE_KEYS "stream, rows, cols, threads, stages, splits, copy, store"
bool schedule_parse(const char *spec, Schedule *out, char *why, size_t whylen);

/* The search's limits.  The budget is counted in kernels priced (each a
   kernel's configurations lowered and priced), so where the search stops
   depends on the program and the budget alone, not on the machine or its
   load: the plan is deterministic.  The time limit only guards against a
   budget no machine gets through; it counts the search thread's CPU
   seconds, so a loaded machine (CI beside other jobs) does not reach it
   sooner, but where it stops still depends on the machine, and it says
   so.  lm_medium, the largest example, prices 1166 kernels (5 s on one
   core). */
#define SEARCH_BUDGET 4000
#define SEARCH_SECONDS 60.0

typedef struct SearchOpts {
  const Gpu *gpu;       /* NULL: the H200 */
  const Schedule *sched; /* NULL: the cost model chooses every schedule */
  int budget;           /* kernel configurations the search may price (0: SEARCH_BUDGET) */
  double seconds;       /* time limit in CPU seconds, a safety net (0: SEARCH_SECONDS) */
  int max_sweeps;       /* 0: 20 */
  int candidate;        /* 0: the cheapest plan; k > 0: the k-th runner-up instead (stats->cands[k - 1]) */
} SearchOpts;

/* A plan the search priced: its predicted seconds and how it came about. */
typedef struct SearchCand {
  double cost;
  int kernels;
  char what[96];             /* "naive partition", "fuse %12 (sum)", "cut %17 (sub), 4 absorbed" */
  /* its partition: the stored nodes of each kernel, kernels in a row, each
     ended by -1 (what the plan is rebuilt from when it is asked for) */
  int *part;
  int npart, cap;            /* (cap: part's length, reused for a later candidate) */
} SearchCand;
#define SEARCH_MAX_CANDS 6

typedef struct SearchStats {
  double seconds;
  SearchStop stop;
  int sweeps, moves_tried, moves_taken, kernels_priced;
  int sched_unmet;           /* fused kernels that no candidate of --schedule fits */
  double naive_cost, cost;   /* predicted seconds */
  NodeList fused;            /* the nodes each taken move was about, in order */
  /* the cheapest plans priced other than the one chosen, cheapest first */
  int ncands;
  SearchCand cands[SEARCH_MAX_CANDS];
} SearchStats;

/* Equality saturation before the search (rewrite_pass.c): the SAFE rules,
   then the term extracted by an IO-aware cost with sizes read at bind (the
   entry's own sizes; NULL/0: g's). */
typedef struct RewriteInfo {
  const char **rules;        /* the rules the extracted term uses, by name */
  int nrules;
  EgStop stop;
  int iterations, enodes, eclasses;
  double seconds;
} RewriteInfo;
Graph *search_rewrite(Graph *g, const SizeArg *bind, int nbind, RewriteInfo *info);
/* The same without the rules of one family (verify: "identity", whose x/1
   and x*1 fire on a size-derived constant only at some sizes). */
Graph *search_rewrite_ex(Graph *g, const SizeArg *bind, int nbind, const char *skip_family, RewriteInfo *info);
/* The same term, the runner's per-iteration report and the rules used
   printed to report (NULL: nothing): `graph --rewrite [--stats]`. */
Graph *search_rewrite_report(Graph *g, const SizeArg *bind, int nbind, FILE *report);

/* Search a plan for g at storage type dt (with o->candidate > 0, the plan
   of that runner-up instead, configured the same way: for timing the cost
   model's alternatives; NULL if there is no such runner-up). */
Plan *plan_search(Graph *g, DType dt, const SearchOpts *o, SearchStats *stats);

#endif
