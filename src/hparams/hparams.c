/*
 * hparams.c: classifying Params and deriving their scalings.
 *
 * Classification.  A dimension grows with the width when its symbolic size
 * names a width symbol (D, 4 * D, D / H); it is the depth dimension when
 * its size is the depth symbol itself (a Param stacked [L, ...] and read as
 * W[l] inside `layers`; one block, L = 1, reads it through a reshape).
 * The Param's values are followed through layout ops (slice, reshape
 * pairing dimensions in order, permute) and elementwise ops on the Param
 * itself (W / sqrt D, tanh W: same shape, not broadcast over activations)
 * to their first consumer that decides the role:
 *   a matrix product: the contracted dimension is the fan-in, the other
 *     matrix dimension the fan-out (a batch axis of the product, heads,
 *     counts toward the fan-in where the product is summed over it next,
 *     else toward the fan-out where it grows with the width);  fan-in
 *     fixed, fan-out growing: input;  both growing: hidden;  fan-in
 *     growing, fan-out fixed: readout;  neither: input (a fixed-size
 *     matrix keeps its base scaling).  An op on the way that is not linear
 *     in the values (tanh) keeps multipliers off them (a readout's output
 *     multiplier stays 1, said in its reason);
 *   a gather over its first dimension: embedding (the gathered rows);
 *   anything else (gains, biases): vector.
 * The block multiplier is carried by the matrix whose product reaches the
 * residual add h + f(h) through positively homogeneous ops (relu, a gain,
 * a bias added on the way); --depth on a stack where none does is refused.
 *
 * Derivation (width), μP for Adam (Tensor Programs V, Yang et al. 2022)
 * as the mup package implements it (Table 8's form: MuReadout, MuAdam),
 * with k = fan_in / fan_in_base:
 *   input matrices, embeddings, vectors: init and learning rate as at the
 *     base (one growing dimension: "vector-like" for MuAdam);
 *   hidden: init std 1/sqrt(fan_in), Adam learning rate × 1/k;
 *   readout: the base model's init (std 1/sqrt(fan_in_base): MuReadout
 *     rescales nn.Linear's init to keep its variance), its output × 1/k
 *     (MuReadout's output_mult / width_mult), learning rate as at the base.
 * Weight decay (AdamW's decoupled decay, p -= lr·wd·p in PyTorch): × k on
 * hidden matrices so that lr·wd stays (MuAdam and the CompleteP reference
 * code: independent decay); none on vectors (gains, biases: CompleteP's
 * groups); as at the base elsewhere.  Adam's epsilon follows the scale of
 * the gradient it is added to: × 1/k for hidden and readout matrices.
 *
 * Derivation (depth), with r = L / L_base and α = 1 (CompleteP, Dey et al.
 * 2025) or ½ (depth-μP, Yang et al. 2023, Tensor Programs VI): each
 * residual block's update is multiplied by r^-α; inside the repeated
 * blocks the Adam learning rate of matrices and vectors is × r^(α-1) (1
 * under CompleteP), the epsilon of matrices × r^-α; weight decay gets no
 * depth factor (the CompleteP reference code, nanoGPT-mup's
 * configure_optimizers, whose groups these rules follow).
 *
 * Muon (the spectral condition, Yang, Simon and Bernstein 2023; Modula;
 * Jordan's Muon): hidden matrices are updated by Muon, whose orthogonalized
 * update scaled by sqrt(max(1, fan_out / fan_in)) has an RMS operator norm
 * independent of the width, so the base learning rate transfers without
 * the 1/k; init std 1/sqrt(fan_in) · min(1, sqrt(fan_out / fan_in))
 * (spectral norm ~ sqrt(fan_out / fan_in)).  In the repeated blocks its
 * learning rate takes the same r^(α-1) as Adam's (by the same argument:
 * the update's size does not follow the gradient's; no source states it).
 * Input, embedding, readout and vectors stay on AdamW with the rules above.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hparams.h"

const char *hp_role_name(HpRole r) {
  switch (r) {
  case HP_INPUT: return "input";
  case HP_HIDDEN: return "hidden";
  case HP_READOUT: return "readout";
  case HP_VECTOR: return "vector";
  case HP_EMBEDDING: return "embedding";
  }
  return "?";
}

/* ---- symbols ---- */

static bool is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '\''; }

/* Does the symbolic size s name the symbol `name` (as a whole word)? */
static bool names(const char *s, const char *name) {
  size_t n = strlen(name);
  for (const char *p = s ? strstr(s, name) : NULL; p; p = strstr(p + 1, name))
    if ((p == s || !is_ident(p[-1])) && !is_ident(p[n])) return true;
  return false;
}

static bool trimmed_eq(const char *s, const char *name) {
  if (!s) return false;
  while (*s == ' ' || *s == '(') s++;
  size_t n = strlen(name);
  if (strncmp(s, name, n)) return false;
  for (s += n; *s; s++)
    if (*s != ' ' && *s != ')') return false;
  return true;
}

static bool width_dim(const HpOpts *o, const Dim *d) {
  for (int i = 0; i < o->nwidth; i++)
    if (names(d->sym, o->width[i].name)) return true;
  return false;
}

/* ---- following a Param's values to the op that decides its role ---- */

typedef struct Use { const Node *n; int operand; } Use;
typedef struct Users { Use *u; int n, cap; } Users;

typedef struct Found {
  const Node *at;     /* the deciding node */
  int kind;           /* 0 none, 1 matrix product, 2 gather, 3 elementwise */
  int fan_in, fan_out; /* Param dimensions */
  bool gain;
  int at_dim[TS_MAX_RANK]; /* matrix product: each Param dimension's dimension in its operand (-1: none) */
  int oprank;              /* and that operand's rank */
  const Node *nonlinear; /* an elementwise op on the Param itself on its way to its product that is not
                            linear in it (tanh W) */
} Found;

/* Is x = n·y or n/y with y another value (linear in n: a multiplier of n is
   one of x)? */
static bool scaled_by_other(const Node *x, const Node *n) {
  return (x->op == OP_MUL || (x->op == OP_DIV && x->in[0] == n)) && x->in[0] != x->in[1];
}

/* map[k]: the dimension of n that the Param's dimension k runs along (-1: none) */
static void follow(const Graph *g, const Users *users, const Node *n, const int *map, int rank, Found *f, int depth) {
  if (f->kind == 1 || f->kind == 2 || depth > 64) return;
  for (int u = 0; u < users[n->id].n; u++) {
    const Node *x = users[n->id].u[u].n;
    int o = users[n->id].u[u].operand;
    int m[TS_MAX_RANK];
    switch (op_info[x->op].cls) {
    case OPC_LAYOUT:
      if (x->op == OP_SLICE) {
        follow(g, users, x, map, rank, f, depth + 1);
      } else if (x->op == OP_PERMUTE) {
        for (int k = 0; k < rank; k++) {
          m[k] = -1;
          for (int i = 0; i < x->shape.rank && map[k] >= 0; i++)
            if (x->perm[i] == map[k]) m[k] = i;
        }
        follow(g, users, x, m, rank, f, depth + 1);
      } else { /* reshape: dimensions paired in order where sizes agree, size 1 skipped */
        int to[TS_MAX_RANK];
        shape_reshape_map(&n->shape, &x->shape, to);
        for (int k = 0; k < rank; k++) m[k] = map[k] >= 0 ? to[map[k]] : -1;
        follow(g, users, x, m, rank, f, depth + 1);
      }
      break;
    case OPC_MATMUL: {
      int r = n->shape.rank;
      int din = o == 1 ? r - 2 : r - 1, dout = o == 1 ? r - 1 : r - 2;
      f->kind = 1, f->at = x, f->fan_in = f->fan_out = -1, f->oprank = r;
      for (int k = 0; k < rank; k++) {
        f->at_dim[k] = map[k];
        if (map[k] == din) f->fan_in = k;
        if (map[k] == dout) f->fan_out = k;
      }
      return;
    }
    case OPC_GATHER:
      if (o == 0) {
        f->kind = 2, f->at = x, f->fan_in = f->fan_out = -1;
        for (int k = 0; k < rank; k++) {
          if (map[k] == x->axis) f->fan_in = k;
          else if (map[k] >= 0 && n->shape.d[map[k]].n > 1) f->fan_out = k;
        }
        return;
      }
      break;
    case OPC_UNARY:
    case OPC_BINARY:
      /* the Param itself transformed elementwise (W / sqrt D, tanh W), not
         broadcast over activations: its product, if one reads it, decides */
      if (shape_equal(&x->shape, &n->shape)) {
        Found before = *f;
        follow(g, users, x, map, rank, f, depth + 1);
        if (f->kind == 1 || f->kind == 2) {
          /* a scale (W / sqrt D, W * mask, -W) keeps the product linear
             in the Param: a multiplier of the Param is still one of the
             product's output; tanh W and W + B are not */
          if (x->op != OP_NEG && !scaled_by_other(x, n)) f->nonlinear = x;
          return;
        }
        *f = before; /* no product that way: the first op decides, as before */
      }
      /* fallthrough */
    case OPC_LEAF:
    case OPC_COMPARE:
    case OPC_SELECT:
    case OPC_REDUCE:
    case OPC_CONCAT:
      if (!f->kind) {
        f->kind = 3, f->at = x;
        f->gain = x->op == OP_MUL || x->op == OP_DIV;
      }
      break;
    }
  }
}

/* Is n's axis summed over next, through elementwise ops only (the heads
   of a per-head output projection, sum (a ⬝ Wo) (dim := 1))? */
static bool summed_after(const Users *us, const Node *n, int axis, int depth) {
  for (int u = 0; u < us[n->id].n && depth < 16; u++) {
    const Node *x = us[n->id].u[u].n;
    if (x->op == OP_SUM && x->axis == axis) return true;
    OpClass c = op_info[x->op].cls;
    if ((c == OPC_UNARY || c == OPC_BINARY) && x->shape.rank == n->shape.rank && summed_after(us, x, axis, depth + 1))
      return true;
  }
  return false;
}

/* Walks over the graph with a mark per node (cleared by the caller). */

/* Does n depend on leaf? */
static bool reaches(const Node *n, const Node *leaf, char *seen) {
  if (n == leaf) return true;
  if (seen[n->id] || op_info[n->op].cls == OPC_LEAF) return false;
  seen[n->id] = 1;
  for (int i = 0; i < n->nin; i++)
    if (reaches(n->in[i], leaf, seen)) return true;
  return false;
}

/* Is a matrix product downstream of n (reading its result)? */
static bool feeds_product(const Users *us, const Node *n, char *seen) {
  if (seen[n->id]) return false;
  seen[n->id] = 1;
  for (int u = 0; u < us[n->id].n; u++) {
    const Node *x = us[n->id].u[u].n;
    if (x->op == OP_MATMUL || feeds_product(us, x, seen)) return true;
  }
  return false;
}

/* Is n computed from a matrix product's result (upstream)? */
static bool computed_by_product(const Node *n, char *seen) {
  if (seen[n->id] || op_info[n->op].cls == OPC_LEAF) return false;
  seen[n->id] = 1;
  if (n->op == OP_MATMUL) return true;
  for (int i = 0; i < n->nin; i++)
    if (computed_by_product(n->in[i], seen)) return true;
  return false;
}

/* From a product's result through positively homogeneous ops (f(c·x) =
   c·f(x) for c > 0) to the residual add of the block the product ends: an
   add whose other operand does not depend on the product and is read by it
   (h + f(h)).  An add of something unrelated (a bias) is passed through
   toward the residual add (the bias itself is then not scaled); W1 in
   gelu(W1 h + b1) ends nothing: the walk stops at the gelu.  A product by
   a factor that no matrix product computes (a gain g[l] * f, a constant)
   is passed through too; one by another product's result ((h W1) * (h W2))
   is not, or both matrices would carry the multiplier. */
static bool ends_branch(const Users *us, const Node *n, const Node *prod, char *seen, size_t nseen, int depth) {
  if (depth > 32) return false;
  for (int u = 0; u < us[n->id].n; u++) {
    const Node *x = us[n->id].u[u].n;
    if (x->op == OP_RESHAPE || x->op == OP_PERMUTE || x->op == OP_RELU) {
      if (ends_branch(us, x, prod, seen, nseen, depth + 1)) return true;
    } else if (scaled_by_other(x, n)) {
      const Node *other = x->in[0] == n ? x->in[1] : x->in[0];
      memset(seen, 0, nseen);
      if (computed_by_product(other, seen)) continue;
      if (ends_branch(us, x, prod, seen, nseen, depth + 1)) return true;
    } else if (x->op == OP_ADD) {
      const Node *other = x->in[0] == n ? x->in[1] : x->in[0];
      memset(seen, 0, nseen);
      if (reaches(other, prod, seen)) continue; /* both sides from the branch */
      memset(seen, 0, nseen);
      if (reaches(prod, other, seen)) return true; /* h + f(h) */
      if (ends_branch(us, x, prod, seen, nseen, depth + 1)) return true; /* a bias on the way */
    }
  }
  return false;
}

static Users *users_of(const Graph *g);
static void users_free(Users *us, const Graph *g);

/* Does n reach a matrix product through layout ops alone (Eᵀ)? */
static bool multiplied(const Users *us, const Node *n, int depth) {
  for (int u = 0; u < us[n->id].n && depth < 8; u++) {
    const Node *x = us[n->id].u[u].n;
    if (x->op == OP_MATMUL || (op_info[x->op].cls == OPC_LAYOUT && multiplied(us, x, depth + 1))) return true;
  }
  return false;
}

/* Is Param `in` stacked along the depth: its first dimension the depth
   symbol and every reader a slice along it (W[l] in `layers`)?  An
   embedding [V, D] gathered by --depth V is not. */
static bool stacked(const Users *us, const Node *in, const char *depth) {
  if (!depth || in->shape.rank == 0 || !trimmed_eq(in->shape.d[0].sym, depth) || !us[in->id].n) return false;
  for (int u = 0; u < us[in->id].n; u++) {
    const Node *x = us[in->id].u[u].n;
    if (x->op == OP_SLICE && x->axis == 0) continue;
    /* one block (L = 1): W[0] of W : [1, D, D] is the reshape to [D, D] */
    bool drop1 = x->op == OP_RESHAPE && in->shape.d[0].n == 1 && x->shape.rank == in->shape.rank - 1;
    for (int d = 0; drop1 && d < x->shape.rank; d++) drop1 = x->shape.d[d].n == in->shape.d[d + 1].n;
    if (!drop1) return false;
  }
  return true;
}

bool hp_has_stack(const Graph *g, const char *depth) {
  Users *us = users_of(g);
  bool any = false;
  for (int i = 0; i < g->ninputs && !any; i++) any = g->inputs[i]->role == ROLE_PARAM && stacked(us, g->inputs[i], depth);
  users_free(us, g);
  return any;
}

static Users *users_of(const Graph *g) {
  Users *us = calloc((size_t)g->nnodes + 1, sizeof *us);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    for (int k = 0; k < n->nin; k++) {
      Users *u = &us[n->in[k]->id];
      if (u->n == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 4;
        u->u = realloc(u->u, sizeof(Use) * (size_t)u->cap);
      }
      u->u[u->n++] = (Use){n, k};
    }
  }
  return us;
}

static void users_free(Users *us, const Graph *g) {
  for (int i = 0; i < g->nnodes; i++) free(us[i].u);
  free(us);
}

/* ---- the rules ---- */

static void derive(HpParam *p, const HpPlan *pl, const HpOpts *o) {
  double k = p->fan_in_base > 0 ? (double)p->fan_in / (double)p->fan_in_base : 1;
  double r = pl->depth_mult, a = o->alpha;
  char *w = p->reason;
  size_t left = sizeof p->reason;
  int used = 0;
#define SAY(...) (used += snprintf(w + used, (size_t)used < left ? left - (size_t)used : 0, __VA_ARGS__))
  p->init_value = 0;
  p->output_mult = 1, p->lr_mult = 1, p->wd_mult = 1, p->eps_mult = 1;
  if (p->grown_dim >= 0) {
    const Dim *hd = &p->param->shape.d[p->grown_dim];
    char nm[32];
    if (hd->sym) snprintf(nm, sizeof nm, "%s", hd->sym);
    else snprintf(nm, sizeof nm, "%lld", (long long)hd->n);
    SAY("its dimension %s, a batch axis of its product (heads), counts toward its fan-%s (%s); ", nm,
        p->grown_into ? "in" : "out",
        p->grown_into ? "the heads are summed after it" : "it grows with the width: the heads are its outputs");
  }
  switch (p->role) {
  case HP_EMBEDDING:
    p->init_std = 1;
    SAY("gathered rows (an embedding): fan-out %lld grows with the width, fan-in is the vocabulary; "
        "μP keeps its init N(0, 1) and its Adam learning rate as at the base",
        (long long)p->fan_out);
    break;
  case HP_INPUT:
    p->init_std = p->fan_in > 0 ? 1 / sqrt((double)p->fan_in) : 1;
    if (p->fan_out_width)
      SAY("fan-in %lld fixed, fan-out %lld grows with the width (an input layer): init 1/sqrt(fan_in) and "
          "the Adam learning rate stay as at the base (μP)", (long long)p->fan_in, (long long)p->fan_out);
    else
      SAY("a matrix whose fan-in %lld and fan-out %lld do not grow with the width: base scaling",
          (long long)p->fan_in, (long long)p->fan_out);
    break;
  case HP_HIDDEN:
    p->init_std = 1 / sqrt((double)p->fan_in);
    if (p->muon) {
      double ratio = (double)p->fan_out / (double)p->fan_in;
      p->init_std *= fmin(1, sqrt(ratio));
      p->lr_mult = sqrt(fmax(1, ratio));
      SAY("fan-in %lld and fan-out %lld grow with the width (hidden): Muon, whose orthogonalized update "
          "scaled by sqrt(max(1, fan_out/fan_in)) keeps its RMS operator norm at any width, so the base "
          "learning rate transfers; init 1/sqrt(fan_in)·min(1, sqrt(fan_out/fan_in)) (spectral condition)",
          (long long)p->fan_in, (long long)p->fan_out);
    } else {
      p->lr_mult = 1 / k;
      p->wd_mult = k;
      p->eps_mult = 1 / k;
      SAY("fan-in %lld and fan-out %lld grow with the width (hidden): μP init 1/sqrt(fan_in), Adam learning "
          "rate × fan_in_base/fan_in = %.4g, its epsilon likewise (gradients shrink like 1/fan_in), weight "
          "decay × %.4g so that lr·wd stays",
          (long long)p->fan_in, (long long)p->fan_out, 1 / k, k);
    }
    break;
  case HP_READOUT:
    p->init_std = 1 / sqrt((double)p->fan_in_base);
    p->output_mult = p->nonlinear ? 1 : 1 / k;
    p->eps_mult = 1 / k;
    SAY("fan-in %lld grows with the width, fan-out %lld does not (a readout): μP multiplies its output by "
        "fan_in_base/fan_in = %.4g (mup's MuReadout), init as at the base, Adam learning rate as at the "
        "base (one growing dimension)", (long long)p->fan_in, (long long)p->fan_out, 1 / k);
    if (p->nonlinear && k != 1)
      SAY(" (but its values reach the product through %s, so a multiplier of them is not one of the output: "
          "left at 1 here; multiply the product's result by %.4g in the model)",
          op_info[p->nonlinear->op].name, 1 / k);
    break;
  case HP_VECTOR:
    p->init_std = 0;
    p->init_value = p->gain ? 1 : 0;
    p->wd_mult = 0;
    SAY("a vector (%s): μP keeps its init (%g) and Adam learning rate as at the base; no weight decay",
        p->gain ? "it multiplies: a gain" : "it adds: a bias", p->init_value);
    break;
  }
  if (p->tied)
    SAY(" (but it is also multiplied as a matrix, tied to the output layer: μP would scale that use as a readout, "
        "output × fan_in_base/fan_in, which one shared tensor cannot have here; untie it, or expect the logits to "
        "grow with the width)");
  if (p->between && (p->role == HP_INPUT || p->role == HP_READOUT) && p->fan_in_width != p->fan_out_width)
    SAY(" (but it sits between two matrix products, as a hidden layer does: if its fixed size grows with the "
        "width, name that symbol in --width, e.g. --width D=128,F=512)");
  if (p->depth_branch && r != 1) {
    double lr = pow(r, a - 1);
    p->lr_mult *= lr;
    if (p->role == HP_VECTOR) {
      SAY("; in the repeated block (depth × %.4g, α = %g): learning rate × (L/L_base)^(α-1) = %.4g", r, a, lr);
    } else {
      if (!p->muon) p->eps_mult *= pow(r, -a);
      SAY("; in the repeated block (depth × %.4g, α = %g): learning rate × (L/L_base)^(α-1) = %.4g", r, a, lr);
      if (!p->muon) SAY(", epsilon × (L/L_base)^-α = %.4g", pow(r, -a));
    }
  } else if (p->depth_branch) {
    SAY("; in the repeated block (at the base depth: no depth factor)");
  }
#undef SAY
}

HpPlan hp_derive(const Graph *g, const HpOpts *o) {
  HpPlan pl = {0};
  pl.opt = o->opt;
  pl.alpha = o->alpha;
  /* the sizes at base: the entry's with the width and depth symbols at their bases */
  SizeArg *base = calloc((size_t)o->nbind + 1, sizeof *base);
  for (int i = 0; i < o->nbind; i++) {
    base[i] = o->bind[i];
    for (int w = 0; w < o->nwidth; w++)
      if (!strcmp(o->bind[i].name, o->width[w].name)) base[i].value = o->width[w].base;
    if (o->depth.name && !strcmp(o->bind[i].name, o->depth.name)) base[i].value = o->depth.base;
  }
  pl.width_mult = 1, pl.depth_mult = 1;
  for (int i = 0; i < o->nbind; i++) {
    if (o->nwidth && !strcmp(o->bind[i].name, o->width[0].name) && o->width[0].base > 0)
      pl.width_mult = (double)o->bind[i].value / (double)o->width[0].base;
    if (o->depth.name && !strcmp(o->bind[i].name, o->depth.name) && o->depth.base > 0)
      pl.depth_mult = (double)o->bind[i].value / (double)o->depth.base;
  }
  pl.branch_mult = pow(pl.depth_mult, -o->alpha);
  Users *us = users_of(g);
  int np = 0;
  for (int i = 0; i < g->ninputs; i++) np += g->inputs[i]->role == ROLE_PARAM;
  pl.params = calloc((size_t)np + 1, sizeof *pl.params);
  for (int i = 0; i < g->ninputs; i++) {
    const Node *in = g->inputs[i];
    if (in->role != ROLE_PARAM) continue;
    HpParam *p = &pl.params[pl.n++];
    p->param = in;
    p->depth_dim = -1;
    p->grown_dim = -1;
    int rank = in->shape.rank, map[TS_MAX_RANK];
    for (int k = 0; k < rank; k++) map[k] = k;
    if (stacked(us, in, o->depth.name)) p->depth_dim = 0;
    p->depth_branch = p->depth_dim >= 0;
    Found f = {0};
    follow(g, us, in, map, rank, &f, 0);
    p->use = f.at;
    p->nonlinear = f.nonlinear;
    p->fan_in_dim = f.kind == 1 || f.kind == 2 ? f.fan_in : -1;
    p->fan_out_dim = f.kind == 1 || f.kind == 2 ? f.fan_out : -1;
    p->gain = f.gain;
    for (int s = 0; s < 2; s++) {
      int d = s ? p->fan_out_dim : p->fan_in_dim;
      int64_t now = d >= 0 ? in->shape.d[d].n : 1, was = now;
      if (d >= 0 && in->shape.d[d].sym && !dim_value_at(&in->shape.d[d], base, o->nbind, &was)) was = now;
      bool wide = d >= 0 && width_dim(o, &in->shape.d[d]);
      if (s) p->fan_out = now, p->fan_out_base = was, p->fan_out_width = wide;
      else p->fan_in = now, p->fan_in_base = was, p->fan_in_width = wide;
    }
    /* a dimension that grows with the width on a batch axis of the product
       (heads: Wq : [H, D, 8] with H growing) is part of the matrix the
       heads make together: of its fan-in when the product's result is
       summed over it next (Wo : [H, 8, D], summed over heads), else of its
       fan-out (the heads' outputs) */
    for (int k = 0; f.kind == 1 && k < rank && p->fan_in_dim >= 0 && p->fan_out_dim >= 0; k++) {
      if (k == p->fan_in_dim || k == p->fan_out_dim || k == p->depth_dim || f.at_dim[k] < 0) continue;
      bool wide = width_dim(o, &in->shape.d[k]);
      bool into = summed_after(us, f.at, f.at_dim[k] + f.at->shape.rank - f.oprank, 0);
      if (!wide && !into) continue; /* fixed heads, each its own output: a batch */
      int64_t now = in->shape.d[k].n, was = now;
      if (in->shape.d[k].sym && !dim_value_at(&in->shape.d[k], base, o->nbind, &was)) was = now;
      /* summed heads add their terms' variances: part of the fan-in even at a fixed count */
      if (into) p->fan_in *= now, p->fan_in_base *= was, p->fan_in_width |= wide;
      else p->fan_out *= now, p->fan_out_base *= was, p->fan_out_width = true;
      p->grown_dim = k, p->grown_into = into;
    }
    if (f.kind == 1) { /* between two products: the other operand computed by one, the result read by one */
      char *seen = calloc((size_t)g->nnodes + 1, 1);
      const Node *other = reaches(f.at->in[1], in, seen) ? f.at->in[0] : f.at->in[1];
      memset(seen, 0, (size_t)g->nnodes + 1);
      bool up = computed_by_product(other, seen);
      memset(seen, 0, (size_t)g->nnodes + 1);
      p->between = up && feeds_product(us, f.at, seen);
      free(seen);
      seen = calloc((size_t)g->nnodes + 1, 1);
      p->branch_last = p->depth_branch && !f.nonlinear && ends_branch(us, f.at, f.at, seen, (size_t)g->nnodes + 1, 0);
      free(seen);
    }
    if (f.kind == 2) p->role = HP_EMBEDDING, p->tied = multiplied(us, in, 0);
    else if (f.kind == 1 && p->fan_in_dim >= 0 && p->fan_out_dim >= 0)
      p->role = p->fan_in_width && p->fan_out_width ? HP_HIDDEN : p->fan_in_width ? HP_READOUT : HP_INPUT;
    else p->role = HP_VECTOR;
    p->muon = o->opt == HP_MUON && p->role == HP_HIDDEN;
    derive(p, &pl, o);
  }
  users_free(us, g);
  free(base);
  if (!pl.n) snprintf(pl.why, sizeof pl.why, "the entry has no Param inputs: nothing to parametrize");
  /* a width symbol no Param's size is written with (a batch size, a typo
     of another Nat): every multiplier would be 1 without a word */
  bool grows = false;
  for (int i = 0; i < pl.n; i++)
    for (int k = 0; k < pl.params[i].param->shape.rank; k++) grows |= width_dim(o, &pl.params[i].param->shape.d[k]);
  /* the depth rules rest on the block multiplier: a stack without a
     residual block h + f(h) that a stacked Param's product (or a gain
     after it) ends has nowhere to put it, and its rates would be scaled for
     a multiplier no one applies */
  bool stack = false, carried = false;
  for (int i = 0; i < pl.n; i++) stack |= pl.params[i].depth_branch, carried |= pl.params[i].branch_last;
  if (pl.n && o->depth.name && stack && !carried) {
    snprintf(pl.why, sizeof pl.why,
             "--depth %s: no block of the stack is residual: the depth rules scale each block's update, x + "
             "(L/L_base)^-α · f(x), and no product of a stacked Param reaches an add h + f(h) (through relu, a "
             "gain or a bias) to carry that multiplier; write the block as h + f(h), or leave out --depth",
             o->depth.name);
    free(pl.params);
    pl.params = NULL;
    pl.n = 0;
  } else if (pl.n && o->nwidth && !grows) {
    snprintf(pl.why, sizeof pl.why,
             "no Param's size is written with the width symbol '%s': nothing grows with it (name the Params' "
             "hidden size, as D in W : Param [D, D])",
             o->width[0].name);
    free(pl.params);
    pl.params = NULL;
    pl.n = 0;
  }
  return pl;
}
