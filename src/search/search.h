/*
 * search.h: the plan search (search.c) and its statistics.
 */
#ifndef TS_SEARCH_H
#define TS_SEARCH_H

#include "../cost/cost.h"
#include "plan.h"

typedef enum { STOP_SATURATED, STOP_SWEEPS, STOP_TIME } SearchStop;
const char *search_stop_name(SearchStop s);

typedef struct SearchOpts {
  const Gpu *gpu;       /* NULL: the H200 */
  double seconds;       /* time limit (0: 10 s) */
  int max_sweeps;       /* 0: 20 */
} SearchOpts;

typedef struct SearchStats {
  double seconds;
  SearchStop stop;
  int sweeps, moves_tried, moves_taken, kernels_priced;
  double naive_cost, cost;   /* predicted seconds */
  NodeList fused;            /* the nodes each taken move was about, in order */
} SearchStats;

/* Search a plan for g at storage type dt. */
Plan *plan_search(Graph *g, DType dt, const SearchOpts *o, SearchStats *stats);

#endif
