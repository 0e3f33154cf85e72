/*
 * inputs.c: how random inputs for a graph are drawn, one rule for every
 * place that draws them (`tilesmith eval` and `verify`, the emitted
 * modules' random_inputs, the GPU harness through the graph JSON).
 *
 * An Index input is uniform over [0, bound), where bound is the smallest
 * size of an axis it is gathered along: its values are traced forward
 * through the ops that pass them on unchanged (layout ops, concat, a gather
 * *from* them) to the index operand of each gather, or to a comparison
 * with an iota (a rewrite turns gather(x, t) into a masked sum over
 * iota == t; the iota's length is the axis).  Neither: bound 2.
 *
 * A real input is normal(0, 1), except a Param that reaches an operand of a
 * matmul through layout ops only (a weight, possibly reshaped or
 * transposed; not through concat, where a learned token joins activations,
 * nor through a gather): normal(0, 1/fan_in), fan_in being the contraction
 * size of the first such matmul in the graph's order, as a network
 * initializes its weights (the forward use: a backward pass, built after
 * the forward in the same graph, multiplies by the transposed weight over
 * the other axis).  The graph is the program as written: a rewrite can
 * fold a gain into the weight (g * W) and hide the matmul from the rule.  A table that is both gathered and multiplied
 * (tied embeddings) is a weight by this rule, so its gathered rows are small
 * too; weights picked by a gather (experts) are not, and stay normal(0, 1).
 * With unit weights a layer's outputs grow like sqrt(fan_in), and a softmax
 * over scores from two such projections is one-hot to within the rounding
 * of any storage type: at D = 2048 even bf16 PyTorch differs from
 * float32 PyTorch by 18% (normwise) on a transformer block.  Inputs that
 * stress the numerics on purpose are verify's adversarial kinds, which start
 * from normal(0, 1) for every real input.
 */
#include "ir.h"

#include <stdlib.h>

/* Does node n pass the values of a node marked in `reach` on unchanged?
   Layout ops always; concat and a gather *from* such a node when `all`
   (an index's values), not for a weight's. */
static bool carries_values(const Node *n, const bool *reach, bool all) {
  switch (op_info[n->op].cls) {
  case OPC_CONCAT:
    if (!all) return false;
    /* fall through */
  case OPC_LAYOUT:
    for (int j = 0; j < n->nin; j++)
      if (reach[n->in[j]->id]) return true;
    return false;
  case OPC_GATHER: return all && reach[n->in[0]->id];
  case OPC_LEAF:
  case OPC_UNARY:
  case OPC_BINARY:
  case OPC_COMPARE:
  case OPC_SELECT:
  case OPC_REDUCE:
  case OPC_MATMUL: return false;
  }
  return false;
}

/* reach[id]: does node id carry `input`'s values (carries_values)?  NULL if
   out of memory; the caller frees. */
static bool *reached(const Graph *g, const Node *input, bool all) {
  bool *reach = calloc((size_t)(g->nnodes > 0 ? g->nnodes : 1), sizeof *reach);
  if (!reach) return NULL;
  reach[input->id] = true;
  for (int i = input->id + 1; i < g->nnodes; i++) reach[i] = carries_values(g->nodes[i], reach, all);
  return reach;
}

/* The length of the iota that n is (through layout ops), or -1. */
static int64_t iota_length(const Node *n) {
  while (op_info[n->op].cls == OPC_LAYOUT) n = n->in[0];
  return n->op == OP_IOTA ? n->shape.d[0].n : -1;
}

int64_t ir_index_bound(const Graph *g, const Node *input) {
  bool *reach = reached(g, input, true);
  int64_t bound = -1;
  for (int i = input->id + 1; reach && i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    int64_t s = -1;
    if (n->op == OP_GATHER && reach[n->in[1]->id]) {
      const Node *x = n->in[0];
      s = x->shape.d[n->axis - (n->shape.rank - x->shape.rank)].n; /* the axis it indexes */
    } else if (op_info[n->op].cls == OPC_COMPARE) {
      for (int k = 0; k < 2; k++)
        if (reach[n->in[k]->id] && iota_length(n->in[1 - k]) > 0) s = iota_length(n->in[1 - k]);
    }
    if (s >= 0 && (bound < 0 || s < bound)) bound = s;
  }
  free(reach);
  return bound < 0 ? 2 : bound;
}

int64_t ir_fan_in(const Graph *g, const Node *input) {
  if (input->op != OP_INPUT || input->role != ROLE_PARAM || input->kind != EK_REAL) return 0;
  bool *reach = reached(g, input, false);
  int64_t fan_in = 0;
  for (int i = input->id + 1; reach && i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (n->op != OP_MATMUL || !(reach[n->in[0]->id] || reach[n->in[1]->id])) continue;
    const Node *a = n->in[0];
    fan_in = a->shape.d[a->shape.rank - 1].n; /* the contraction size */
    break;
  }
  free(reach);
  return fan_in;
}
