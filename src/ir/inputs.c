/*
 * inputs.c: how random inputs for a graph are drawn, one rule for every
 * place that draws them (`tilesmith eval` and `verify`, the emitted
 * modules' random_inputs, the GPU harness through the graph JSON).
 *
 * An Index input is uniform over [0, bound), where bound is the smallest
 * size of an axis it is gathered along: its values are traced forward
 * through the ops that pass them on unchanged (layout ops, concat, a gather
 * *from* them) to the index operand of each gather.  Never gathered: bound 2.
 *
 * A real input is normal(0, 1), except a Param that reaches an operand of a
 * matmul through layout ops only (a weight, possibly reshaped or
 * transposed; not through concat, where a learned token joins activations,
 * nor through a gather): normal(0, 1/fan_in), fan_in being the matmul's
 * contraction size (the largest, if it feeds several), as a network
 * initializes its weights.  A table that is both gathered and multiplied
 * (tied embeddings) is a weight by this rule, so its gathered rows are small
 * too; weights picked by a gather (experts) are not, and stay normal(0, 1).  With unit weights a layer's outputs grow like sqrt(fan_in), and
 * a softmax over scores from two such projections is one-hot to within the
 * rounding of any storage type: at D = 2048 even bf16 PyTorch differs from
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

/* Size of the axis a gather node indexes in its data operand. */
static int64_t gather_axis_size(const Node *n) {
  const Node *x = n->in[0];
  return x->shape.d[n->axis - (n->shape.rank - x->shape.rank)].n;
}

/* The largest size over the nodes that `input`'s values reach (through
   carries_values) in operand `slot` of an op of class `cls` (slot -1: any
   operand), measured by size(); -1 if none is reached. */
static int64_t over_reached(const Graph *g, const Node *input, bool all, OpClass cls, int slot, bool smallest,
                            int64_t (*size)(const Node *)) {
  bool *reach = calloc((size_t)(g->nnodes > 0 ? g->nnodes : 1), sizeof *reach);
  int64_t best = -1;
  if (!reach) return -1;
  reach[input->id] = true;
  for (int i = input->id + 1; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    if (op_info[n->op].cls == cls) {
      bool hit = false;
      for (int j = 0; j < n->nin; j++) hit |= (slot < 0 || slot == j) && reach[n->in[j]->id];
      int64_t s = hit ? size(n) : -1;
      if (s >= 0 && (best < 0 || (smallest ? s < best : s > best))) best = s;
    }
    reach[i] = carries_values(n, reach, all);
  }
  free(reach);
  return best;
}

int64_t ir_index_bound(const Graph *g, const Node *input) {
  int64_t b = over_reached(g, input, true, OPC_GATHER, 1, true, gather_axis_size);
  return b < 0 ? 2 : b;
}

/* Contraction size of a matmul: the last axis of its left operand. */
static int64_t contraction_size(const Node *n) {
  const Node *a = n->in[0];
  return a->shape.rank ? a->shape.d[a->shape.rank - 1].n : 1;
}

int64_t ir_fan_in(const Graph *g, const Node *input) {
  if (input->op != OP_INPUT || input->role != ROLE_PARAM || input->kind != EK_REAL) return 0;
  int64_t k = over_reached(g, input, false, OPC_MATMUL, -1, false, contraction_size);
  return k > 0 ? k : 0;
}
