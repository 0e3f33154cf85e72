/*
 * plan.h: plans, the size-generic description of a tile program that the
 * search chooses and the plan lowering turns into tiles.
 *
 * A plan is a list of kernels.  A kernel computes a set of graph nodes (its
 * members) and stores some of them (its outputs: the members used by other
 * kernels or by the program).  Everything else a member reads comes from
 * global memory through index expressions (a transpose, a reshape, a gather
 * are read in place).  The members' dimensions are unified into the
 * kernel's logical axes (axes.c): an elementwise op and its operands share
 * axes, a reduction's operand has one axis more, a matrix product's
 * operands meet on its contraction axis.  Each axis has a declared role,
 * as a Mirage block graph declares its grid mapping:
 *
 *   GRID    tiled across blocks: each block covers `tile` elements of it;
 *   STREAM  reduced by members and streamed through one loop per block,
 *           `tile` elements an iteration (the key loop of attention, the K
 *           loop of a matrix product); `splits` > 1 also divides it across
 *           blocks, each streaming its part, and a combine kernel merges
 *           the partial states (flash-decoding, split-K);
 *   WHOLE   held whole on chip (a row that fits, a head dimension);
 *   INNER   reduced by an in-loop matrix product through a nested loop
 *           (the hidden dimension of the logits inside a loop over the
 *           vocabulary).
 *
 * The stream law (stream.c) decides whether a kernel with a STREAM axis is
 * realizable and how: which reductions over the stream are loop-carried
 * states, which states depend on which through a homomorphism (online
 * softmax), which factors leave the loop (FlashNorm's row scale), how many
 * passes over the stream it needs, and which tiles a mask predicate lets
 * the loop skip.  A plan records its storage decisions too: statistics and
 * partial states in float32.
 */
#ifndef TS_PLAN_H
#define TS_PLAN_H

#include "../tile/tile.h"

#define PLAN_MAX_AXES 12
#define PLAN_MAX_STATES 16
#define PLAN_MAX_PASSES 3

typedef enum { AX_GRID, AX_STREAM, AX_WHOLE, AX_INNER } AxisRole;
const char *axis_role_name(AxisRole r);

typedef struct PAxis {
  int64_t size;        /* elements along the axis */
  const char *sym;     /* its symbolic size ("N"), or NULL */
  AxisRole role;
  int64_t tile;        /* GRID: elements a block covers; STREAM/INNER: an iteration; WHOLE: the extent held */
  int64_t splits;      /* STREAM: blocks dividing the axis (1: none) */
  bool reduced;        /* some member reduces or contracts over it */
  bool in_output;      /* some output varies along it */
} PAxis;

typedef VEC(const Node *) NodeList;

/* One loop-carried state: a reduction over the stream axis. */
typedef struct PState {
  const Node *node;    /* the reduce or matmul */
  int pass;            /* the pass over the stream that computes it */
  const Node *dep;     /* the state its operand depends on in the same pass, or NULL: */
  bool shift;          /* false: a max/min it is rescaled against (online softmax), by
                          exp(law_c * (dep_old - dep_new)) (max; min: the other way);
                          true: a sum S of y whose mean it is shifted by (Chan's merge):
                          the operand is (law_c * (y - S/n))^2 */
  double law_c;
  const Node *law_f;   /* a positive value per row multiplying law_c (exp(law_c·law_f·(y − D))), or NULL */
  /* factors that left the loop: value = state * prod post[i].f ^ post[i].sign */
  int npost;
  struct { const Node *f; int sign; } post[4];
  /* where they were: inside the loop, node n stands for its operand `keep` */
  int ndrop;
  struct { const Node *n; int keep; } drop[8];
} PState;

/* A predicate on index values (a mask) that makes whole tiles of the stream
   neutral: where it is false in every element of a tile, the tile adds
   nothing to any state, and the loop skips it. */
typedef struct PMask {
  const Node *cond;    /* the comparison (or its negation's source, see neg) */
  bool neg;            /* skip where cond is true everywhere instead */
} PMask;

typedef struct PKernel {
  int id;
  const Node *root;    /* the main output (names the kernel) */
  NodeList members;    /* in id order (topological) */
  NodeList outs;       /* members stored to global memory */
  NodeList views;      /* parallel to outs (axes.c): the reshape an out is stored through
                          (into the reshape's global, the same bytes in row-major order),
                          or NULL; the reshape itself is not a member */
  bool naive;          /* lowered by the naive rules (lower.c) */
  int naxes;
  PAxis ax[PLAN_MAX_AXES];
  int stream;          /* index of the STREAM axis, or -1 */
  /* each axis by a slot that runs along it: member node id and dimension
     (TS_MAX_RANK: the axis the node reduces over); what plan_transfer
     matches axes by */
  struct { int node; int8_t dim; } axrep[PLAN_MAX_AXES];
  /* reduced axes of one size joined to stream in lockstep, by their
     representative slots, in the order joined */
  int nmerge;
  struct { int node; int8_t dim; } merge[PLAN_MAX_AXES][2];
  int threads, stages;
  int copy;            /* bulk tile copies (Kernel.copy): 0 the target's default, 1 on, 2 off */
  int store;           /* the final tile stored through shared memory (Kernel.store): likewise */
  /* axis analysis (axes.c): per member node id, per dimension, the axis it
     runs along (-1: a dimension of size 1); and the axis a reduction or
     product reduces over */
  int8_t (*dimax)[TS_MAX_RANK];
  int8_t *redax;
  bool *member;        /* per node id */
  /* per node id: a tensor in memory that two or more members read; it
     takes part in the axis union (its readers meet on its axes) and the
     lowering loads it once into a tile: one read of a row that fits */
  bool *loaded;
  NodeList axnodes;    /* the members and the loaded tensors, in id order */
  /* the stream law (stream.c) */
  int npasses;
  int nstates;
  PState *states;      /* PLAN_MAX_STATES of them, allocated by plan_stream */
  int nmasks;
  PMask masks[4];
  char why[200];       /* why the kernel cannot be realized (analysis) */
  double cost;         /* predicted seconds (search) */
} PKernel;

typedef struct Plan {
  Graph *g;
  DType dtype;
  VEC(PKernel *) kernels;
  int *kernel_of;      /* per node id: the kernel that stores it (-1: an input or computed nowhere) */
  bool pricing;        /* one kernel lowered to be priced: globals only for what it touches */
  int sms;             /* the GPU's streaming multiprocessors (the search's profile): a combine
                          kernel's blocks are sized to give each work; 0 before a search */
  /* per node id, stamps of plan_members' walks (shared by a plan's
     copies, so stamps never repeat): visited in this walk, a member of
     this kernel */
  struct PlanMarks {
    int *seen_at, *member_at, *local_at; int stamp;
    /* scratch of plan_axes and plan_stream, per node (one set per plan,
       not one per call: thousands of calls over thousands of nodes):
       readers of a tensor in memory (all zero between calls), a member's
       first slot, a walk's flags, a sign */
    int *count_at, *slot_at; bool *flag_at; int8_t *sign_at;
  } *marks;
} Plan;

/* The node a naive kernel k computes and stores: the reshape its root is
   stored through (a view), else its root. */
const Node *plan_naive_node(const PKernel *k);

/* The naive plan: one kernel per materialized node, as lower.c lowers it. */
Plan *plan_naive(Graph *g, DType dt);
/* An empty plan, and a new kernel appended to it (plan.c). */
Plan *plan_new(Graph *g, DType dt);
PKernel *plan_kernel_new(Plan *p, const Node *root);
/* Sort a node list by id (topological order). */
void plan_sort_nodes(NodeList *l);

/* Join axis b into axis a (lockstep streaming of two reductions of one
   size); recorded in k->merge (axes.c). */
void plan_merge_axes(PKernel *k, int a, int b);
/* The axis of a member's slot (dim TS_MAX_RANK: its reduced axis); -1 if
   the node is not a member or the dimension has size 1. */
int plan_axis_of_slot(const PKernel *k, int node, int dim);

/* The plan p (for graph G) carried over to graph g of the same program at
   other sizes: the same stored nodes, kernels, roles and merges, tiles
   scaled down to the new sizes (at most half an axis, so every axis has
   two tiles or more and tails stay).  NULL (reason in why) when g's
   structure differs from G's. */
Plan *plan_transfer(const Plan *p, Graph *g, char *why, size_t whylen);
/* Does g have p's graph's structure (plan_transfer's node matching)? */
bool plan_matches(const Plan *p, Graph *g);

/* Axis analysis of a kernel's members (axes.c): unify dimensions into
   axes; false (reason in k->why) if the members cannot share one
   iteration space (a reshape between members that is not a size-1
   insertion, two dimensions of a node on one axis, ...). Resets roles:
   axes reduced by a member and not in an output start as WHOLE, the others
   as GRID with tile 1; callers then set roles and tiles. */
bool plan_axes(Plan *p, PKernel *k);
/* Only k's members (k->members, in id order; outs stored through views
   as plan_axes stores them), none of the per-node tables: in time of the
   kernel's size, not the graph's, for the search's price cache, which
   is keyed by them. */
void plan_members(Plan *p, PKernel *k);
/* n fresh stamps for walks over p's marks (the first of them; none in use). */
int plan_stamps(Plan *p, int n);
/* The axis of member n's dimension d (-1 for size 1). */
static inline int pk_axis(const PKernel *k, const Node *n, int d) { return k->dimax[n->id][d]; }
/* Does node n have axes in k (a member or a loaded tensor)? */
static inline bool pk_has_axes(const PKernel *k, const Node *n) { return k->member[n->id] || k->loaded[n->id]; }
/* Extent of an axis inside a block's tile: tile for GRID/STREAM/INNER, tile for WHOLE. */
static inline int64_t pk_extent(const PKernel *k, int a) { return k->ax[a].tile; }

/* The stream law (stream.c): classify the members against the stream axis,
   find the loop-carried states, their dependences and passes, the factors
   that leave the loop and the masks that skip tiles; false (reason in
   k->why) when the kernel cannot stream in at most PLAN_MAX_PASSES passes. */
bool plan_stream(Plan *p, PKernel *k);
/* Does member n vary along the stream axis (is it a per-tile value)? */
bool pk_varies(const PKernel *k, const Node *n);

/* Lower a plan to a tile program (lower_plan.c). */
TileProgram *tile_lower_plan(Plan *p);

#endif
