/*
 * grad.c: reverse-mode automatic differentiation on the graph IR (see
 * grad.h).
 *
 * Nodes are visited in reverse id order (ids are topological), so a node's
 * adjoint is complete when it is reached; only nodes that depend on a
 * Param and hold real values get one.  Each rule below states d(node)/d
 * (operand) times the adjoint, then `fit` makes the contribution the
 * operand's shape.  A tensor of zeros shaped like x is select(x == x, 0, 0)
 * (NaN-safe: both branches are 0), the one way the IR has to stretch a
 * value to a shape; the search fuses it away.
 */
#include <math.h>
#include <string.h>

#include "grad.h"

/* The adjoint of a slice x[lo:hi] along axis, for x: kept apart until x's
   adjoint is complete, so that the slices of one tensor (a stacked weight
   read as W[l], layer by layer) become one concatenation of their adjoints
   rather than a sum of zero-padded copies of x (L of them for L layers). */
typedef struct Piece {
  int axis;
  int64_t lo, hi;
  Node *g;
  struct Piece *next;
} Piece;

typedef struct G {
  Graph *g;
  Node **adj;      /* per node id: the adjoint so far, or NULL */
  Piece **pieces;  /* per node id: slice adjoints not yet added into adj */
  bool *needs;     /* per node id: depends on a Param and is real */
  Pos pos;
} G;

static Node *K(G *d, double v) { return ir_const(d->g, v, d->pos); }
static Node *un(G *d, Op op, Node *a) { return ir_unary(d->g, op, a, d->pos); }
static Node *bin(G *d, Op op, Node *a, Node *b) { return ir_binary(d->g, op, a, b, d->pos); }
static Node *sel(G *d, Node *c, Node *a, Node *b) { return ir_select(d->g, c, a, b, d->pos); }

/* zeros of x's shape */
static Node *zeros_like(G *d, Node *x) {
  Node *c = x->kind == EK_BOOL ? x : bin(d, OP_EQ, x, x);
  return sel(d, c, K(d, 0), K(d, 0));
}

/* v made x's shape: summed over the axes broadcasting added or stretched,
   reshaped to x's rank, stretched where v is narrower than x */
static Node *fit(G *d, Node *v, Node *x) {
  const Shape *s = &v->shape, *t = &x->shape;
  int lead = s->rank - t->rank;
  for (int a = 0; a < s->rank; a++) {
    int ta = a - lead;
    bool drop = ta < 0 || t->d[ta].n == 1; /* an axis x lacks, or has as 1 */
    if (drop && v->shape.d[a].n != 1) v = ir_reduce(d->g, OP_SUM, v, a, d->pos);
  }
  if (v->shape.rank != t->rank) {
    Shape r = *t;
    for (int a = 0; a < t->rank; a++) {
      int sa = a + lead;
      r.d[a] = sa >= 0 ? v->shape.d[sa] : (Dim){1, NULL};
      if (r.d[a].n == t->d[a].n) r.d[a] = t->d[a];
    }
    v = ir_reshape(d->g, v, &r, d->pos);
  }
  bool narrow = false;
  for (int a = 0; a < t->rank; a++) narrow |= v->shape.d[a].n != t->d[a].n;
  if (narrow) v = bin(d, OP_ADD, v, zeros_like(d, x));
  return v;
}

static void give(G *d, Node *x, Node *contrib) {
  if (!d->needs[x->id]) return;
  contrib = fit(d, contrib, x);
  d->adj[x->id] = d->adj[x->id] ? bin(d, OP_ADD, d->adj[x->id], contrib) : contrib;
}

/* x [..., m, c] as the rows of a matrix [(... m), c]; the merged dimension
   keeps a symbolic form (B*N) when every part has one */
static Node *rows(G *d, Node *x) {
  Shape r = x->shape;
  int k = r.rank;
  Dim m = {1, ""};
  for (int i = 0; i < k - 1; i++) {
    const Dim *di = &x->shape.d[i];
    m.n *= di->n;
    if (!m.sym || !di->sym) {
      m.sym = NULL;
      continue;
    }
    bool atom = strcspn(di->sym, "+-*/^ ") == strlen(di->sym);
    m.sym = arena_printf(d->g->ctx->arena, "%s%s%s%s%s", m.sym, i ? "*" : "", atom ? "" : "(", di->sym, atom ? "" : ")");
  }
  r.d[0] = m;
  r.d[1] = x->shape.d[k - 1];
  r.rank = 2;
  return ir_reshape(d->g, x, &r, d->pos);
}

/* x with a dimension of 1 inserted before dimension `at` */
static Node *unsqueeze(G *d, Node *x, int at) {
  Shape s = x->shape;
  for (int a = s.rank; a > at; a--) s.d[a] = s.d[a - 1];
  s.d[at] = (Dim){1, NULL};
  s.rank++;
  return ir_reshape(d->g, x, &s, d->pos);
}

/* the adjoint of gather@ax(x, idx) for x: each g[.., j, ..] added at
   x[.., idx[.., j, ..], ..] (a one-hot sum over j) */
static Node *scatter(G *d, Node *g, Node *x, Node *idx, int ax) {
  int r = x->shape.rank;
  if (r + 1 > TS_MAX_RANK)
    ts_error(d->g->ctx, d->pos, "the gradient of this gather needs rank %d, above the limit %d", r + 1, TS_MAX_RANK);
  Node *gi = unsqueeze(d, g, ax + 1), *ii = unsqueeze(d, idx, ax + 1);
  Shape is = {0};
  is.rank = r + 1;
  for (int a = 0; a < is.rank; a++) is.d[a] = (Dim){1, NULL};
  is.d[ax + 1] = x->shape.d[ax];
  Node *io = ir_reshape(d->g, ir_iota(d->g, x->shape.d[ax].n, x->shape.d[ax].sym, d->pos), &is, d->pos);
  Node *hit = sel(d, bin(d, OP_EQ, ii, io), gi, K(d, 0));
  Node *s = ir_reduce(d->g, OP_SUM, hit, ax, d->pos);
  Shape out = s->shape;
  for (int a = ax; a < r; a++) out.d[a] = out.d[a + 1];
  out.rank = r;
  return ir_reshape(d->g, s, &out, d->pos);
}

/* max/min: the adjoint to the winner, half to each of a tie */
static Node *pick(G *d, Op wins, Node *a, Node *b, Node *g) {
  return sel(d, bin(d, wins, a, b), g, sel(d, bin(d, OP_EQ, a, b), bin(d, OP_MUL, g, K(d, 0.5)), K(d, 0)));
}

/* the nodes built for n's adjoint come from n's source */
static void at_source(G *d, const Node *n) {
  d->pos = n->pos;
  d->g->cur_site = n->site;
  d->g->cur_via = n->via;
}

static void backward(G *d, Node *n) {
  Node *g = d->adj[n->id];
  at_source(d, n);
  Node *a = n->nin > 0 ? n->in[0] : NULL, *b = n->nin > 1 ? n->in[1] : NULL;
  switch (n->op) {
  case OP_INPUT:
  case OP_CONST:
  case OP_IOTA:
  case OP_IDIV: /* integers */
  case OP_CAST: /* from integers or booleans: nothing to differentiate */
  case OP_LT:
  case OP_LE:
  case OP_GT:
  case OP_GE:
  case OP_EQ:
  case OP_NE: return;
  case OP_NEG: give(d, a, un(d, OP_NEG, g)); return;
  case OP_EXP: give(d, a, bin(d, OP_MUL, g, n)); return;
  case OP_LOG: give(d, a, bin(d, OP_DIV, g, a)); return;
  case OP_SQRT: give(d, a, bin(d, OP_DIV, bin(d, OP_MUL, g, K(d, 0.5)), n)); return;
  case OP_RSQRT: /* -x^(-3/2) / 2 = -y^3 / 2 */
    give(d, a, bin(d, OP_MUL, g, bin(d, OP_MUL, K(d, -0.5), bin(d, OP_MUL, n, bin(d, OP_MUL, n, n)))));
    return;
  case OP_TANH: give(d, a, bin(d, OP_MUL, g, bin(d, OP_SUB, K(d, 1), bin(d, OP_MUL, n, n)))); return;
  case OP_ERF: /* 2/sqrt(pi) exp(-x^2) */
    give(d, a, bin(d, OP_MUL, g, bin(d, OP_MUL, K(d, 1.1283791670955126), un(d, OP_EXP, un(d, OP_NEG, bin(d, OP_MUL, a, a))))));
    return;
  case OP_SIGMOID: give(d, a, bin(d, OP_MUL, g, bin(d, OP_MUL, n, bin(d, OP_SUB, K(d, 1), n)))); return;
  case OP_RELU: give(d, a, sel(d, bin(d, OP_GT, a, K(d, 0)), g, K(d, 0))); return;
  case OP_ABS: /* g · sign(a), as PyTorch: at 0 an infinite g gives NaN (0 · ∞), not 0 */
    give(d, a, bin(d, OP_MUL, g, sel(d, bin(d, OP_GT, a, K(d, 0)), K(d, 1), sel(d, bin(d, OP_LT, a, K(d, 0)), K(d, -1), K(d, 0)))));
    return;
  case OP_ADD:
    give(d, a, g);
    give(d, b, g);
    return;
  case OP_SUB:
    give(d, a, g);
    if (d->needs[b->id]) give(d, b, un(d, OP_NEG, g));
    return;
  case OP_MUL:
    if (d->needs[a->id]) give(d, a, bin(d, OP_MUL, g, b));
    if (d->needs[b->id]) give(d, b, bin(d, OP_MUL, g, a));
    return;
  case OP_DIV:
    if (d->needs[a->id]) give(d, a, bin(d, OP_DIV, g, b));
    if (d->needs[b->id]) give(d, b, un(d, OP_NEG, bin(d, OP_DIV, bin(d, OP_MUL, g, n), b)));
    return;
  case OP_POW: /* as PyTorch: 0 for the base where the exponent is 0, and
                   for the exponent where the base is 0 and the exponent >= 0
                   (not 0 * log 0 = NaN) */
    if (d->needs[a->id])
      give(d, a, sel(d, bin(d, OP_EQ, b, K(d, 0)), K(d, 0),
                     bin(d, OP_MUL, g, bin(d, OP_MUL, b, bin(d, OP_POW, a, bin(d, OP_SUB, b, K(d, 1)))))));
    if (d->needs[b->id]) {
      Node *v = bin(d, OP_MUL, g, bin(d, OP_MUL, n, un(d, OP_LOG, a)));
      give(d, b, sel(d, bin(d, OP_EQ, a, K(d, 0)), sel(d, bin(d, OP_GE, b, K(d, 0)), K(d, 0), v), v));
    }
    return;
  case OP_MAX:
    if (d->needs[a->id]) give(d, a, pick(d, OP_GT, a, b, g));
    if (d->needs[b->id]) give(d, b, pick(d, OP_GT, b, a, g));
    return;
  case OP_MIN:
    if (d->needs[a->id]) give(d, a, pick(d, OP_LT, a, b, g));
    if (d->needs[b->id]) give(d, b, pick(d, OP_LT, b, a, g));
    return;
  case OP_SELECT: {
    Node *c = n->in[0], *x = n->in[1], *y = n->in[2];
    if (d->needs[x->id]) give(d, x, sel(d, c, g, K(d, 0)));
    if (d->needs[y->id]) give(d, y, sel(d, c, K(d, 0), g));
    return;
  }
  case OP_SUM: give(d, a, g); return; /* fit stretches it along the axis */
  case OP_AMAX:
  case OP_AMIN: {
    /* evenly among the elements equal to the result */
    Node *hit = bin(d, OP_EQ, a, n);
    Node *cnt = ir_reduce(d->g, OP_SUM, sel(d, hit, K(d, 1), K(d, 0)), n->axis, d->pos);
    give(d, a, sel(d, hit, bin(d, OP_DIV, g, cnt), K(d, 0)));
    return;
  }
  case OP_MATMUL:
    if (d->needs[a->id]) give(d, a, ir_matmul(d->g, g, ir_transpose(d->g, b, d->pos), d->pos));
    if (d->needs[b->id]) {
      if (b->shape.rank == 2 && a->shape.rank > 2) {
        /* a weight shared by a batch of rows ([..., m, k] x [k, n]): one
           product over all the rows, not one per batch and a sum of them */
        give(d, b, ir_matmul(d->g, ir_transpose(d->g, rows(d, a), d->pos), rows(d, g), d->pos));
      } else {
        give(d, b, ir_matmul(d->g, ir_transpose(d->g, a, d->pos), g, d->pos));
      }
    }
    return;
  case OP_PERMUTE: {
    int inv[TS_MAX_RANK];
    for (int i = 0; i < n->shape.rank; i++) inv[n->perm[i]] = i;
    give(d, a, ir_permute(d->g, g, inv, n->shape.rank, d->pos));
    return;
  }
  case OP_RESHAPE: give(d, a, ir_reshape(d->g, g, &a->shape, d->pos)); return;
  case OP_SLICE: { /* placed with the other slices of a when a's adjoint is complete (settle) */
    if (!d->needs[a->id]) return;
    Piece *pc = arena_alloc(d->g->ctx->arena, sizeof *pc);
    *pc = (Piece){n->axis, n->lo, n->hi, fit(d, g, n), d->pieces[a->id]};
    d->pieces[a->id] = pc;
    return;
  }
  case OP_CONCAT: {
    int64_t off = 0;
    for (int i = 0; i < n->nin; i++) {
      Node *x = n->in[i];
      int64_t len = x->shape.d[n->axis].n;
      if (d->needs[x->id]) give(d, x, ir_slice(d->g, g, n->axis, off, off + len, d->pos));
      off += len;
    }
    return;
  }
  case OP_GATHER: give(d, a, scatter(d, g, a, b, n->axis)); return;
  case OP_COUNT: return;
  }
}

/* The sorted, disjoint pieces [from, to) of one axis into x's adjoint: one
   concatenation, slices of zeros z (x's shape) in the gaps. */
static void place(G *d, Node *x, Node *z, Piece *from, const Piece *to) {
  int n = 0, cap = 1, ax = from->axis;
  for (Piece *p = from; p != to; p = p->next) cap += 2;
  Node **parts = arena_alloc(d->g->ctx->arena, sizeof(Node *) * (size_t)cap);
  int64_t at = 0, len = x->shape.d[ax].n;
  for (Piece *p = from; p != to; p = p->next) {
    if (p->lo > at) parts[n++] = ir_slice(d->g, z, ax, at, p->lo, d->pos);
    parts[n++] = p->g;
    at = p->hi;
  }
  if (at < len) parts[n++] = ir_slice(d->g, z, ax, at, len, d->pos);
  give(d, x, n == 1 ? parts[0] : ir_concat(d->g, parts, n, ax, d->pos));
}

/* x's slice adjoints into its adjoint: along one axis, sorted, pieces of
   the same range added, the rest disjoint: one concatenation with zeros in
   the gaps; otherwise each padded with zeros and added. */
static void settle(G *d, Node *x) {
  Piece *list = d->pieces[x->id];
  if (!list) return;
  d->pieces[x->id] = NULL;
  Piece *sorted = NULL; /* insertion sort by (axis, lo, hi) */
  while (list) {
    Piece *p = list, **at = &sorted;
    list = list->next;
    while (*at && ((*at)->axis < p->axis || ((*at)->axis == p->axis && ((*at)->lo < p->lo ||
                                                                       ((*at)->lo == p->lo && (*at)->hi <= p->hi)))))
      at = &(*at)->next;
    p->next = *at;
    *at = p;
  }
  for (Piece *p = sorted; p && p->next;) /* the same range twice: one piece */
    if (p->next->axis == p->axis && p->next->lo == p->lo && p->next->hi == p->hi) {
      p->g = bin(d, OP_ADD, p->g, p->next->g);
      p->next = p->next->next;
    } else {
      p = p->next;
    }
  bool one = true;
  for (Piece *p = sorted; p && p->next; p = p->next) one &= p->next->axis == p->axis && p->next->lo >= p->hi;
  Node *z = zeros_like(d, x);
  if (one) {
    place(d, x, z, sorted, NULL);
    return;
  }
  for (Piece *p = sorted; p; p = p->next) place(d, x, z, p, p->next);
}

void grad_need_loss(Graph *g) {
  Node *out = g->output;
  if (out->kind != EK_REAL || shape_numel(&out->shape) != 1) {
    char s[256];
    ts_error(g->ctx, out->pos,
             "a gradient needs a loss: '%s' returns %s of shape %s, not one real number (sum or average it)",
             g->entry ? g->entry : "the entry", out->kind == EK_REAL ? "a tensor" : "a non-real tensor",
             shape_str(&out->shape, s, sizeof s));
  }
}

Grads grad_build(Graph *g) {
  Node *out = g->output;
  G d = {.g = g, .pos = out->pos};
  grad_need_loss(g);
  int n0 = g->nnodes;
  d.adj = arena_alloc(g->ctx->arena, sizeof(Node *) * (size_t)n0);
  d.needs = arena_alloc(g->ctx->arena, sizeof(bool) * (size_t)n0);
  d.pieces = arena_alloc(g->ctx->arena, sizeof(Piece *) * (size_t)n0);
  for (int i = 0; i < n0; i++) {
    Node *n = g->nodes[i];
    bool need = n->op == OP_INPUT && n->role == ROLE_PARAM;
    for (int k = 0; k < n->nin && !need; k++) need = d.needs[n->in[k]->id];
    d.needs[i] = need && n->kind == EK_REAL;
  }
  Grads r = {0};
  for (int i = 0; i < g->ninputs; i++) r.n += g->inputs[i]->role == ROLE_PARAM;
  r.param = arena_alloc(g->ctx->arena, sizeof(Node *) * (size_t)(r.n ? r.n : 1));
  r.grad = arena_alloc(g->ctx->arena, sizeof(Node *) * (size_t)(r.n ? r.n : 1));
  Pos site = g->cur_site;
  const char *via = g->cur_via;
  at_source(&d, out);
  if (d.needs[out->id]) {
    d.adj[out->id] = fit(&d, K(&d, 1), out);
    for (int i = out->id; i >= 0; i--) {
      settle(&d, g->nodes[i]);
      if (d.adj[i] && d.needs[i]) backward(&d, g->nodes[i]);
    }
  }
  int k = 0;
  for (int i = 0; i < g->ninputs; i++) {
    Node *p = g->inputs[i];
    if (p->role != ROLE_PARAM) continue;
    r.param[k] = p;
    r.grad[k++] = p->id < n0 && d.adj[p->id] ? d.adj[p->id] : fit(&d, K(&d, 0), p);
  }
  g->cur_site = site;
  g->cur_via = via;
  return r;
}

static double loss_at(Graph *g, Tensor **inputs) {
  Tensor *t = interp_run_ex(g, inputs, NULL, g->output, NULL, NULL);
  double v = t->data[0];
  tensor_free(t);
  return v;
}

void grad_check(Graph *g, const Grads *gr, Tensor **inputs, int samples, double *err, double *beyond,
                int64_t *checked) {
  for (int k = 0; k < gr->n; k++) {
    err[k] = beyond[k] = 0;
    checked[k] = 0;
    int at = 0;
    while (g->inputs[at] != gr->param[k]) at++;
    Tensor *x = inputs[at];
    Tensor *ana = interp_run_ex(g, inputs, NULL, gr->grad[k], NULL, NULL);
    int64_t n = shape_numel(&x->shape), m = n > samples ? samples : n;
    uint64_t state = 0x9e3779b97f4a7c15u * (uint64_t)(k + 1);
    for (int64_t s = 0; s < m; s++, checked[k]++) {
      /* every element when there are few; else elements drawn at random
         (an even stride can fall on one column of every row) */
      int64_t i = s;
      if (n > samples) {
        state += 0x9e3779b97f4a7c15u;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        i = (int64_t)((z ^ (z >> 31)) % (uint64_t)n);
      }
      double x0 = x->data[i], h = 1e-6 * (fabs(x0) > 1 ? fabs(x0) : 1);
      x->data[i] = x0 + h;
      double up = loss_at(g, inputs);
      x->data[i] = x0 - h;
      double down = loss_at(g, inputs);
      x->data[i] = x0;
      double num = (up - down) / (2 * h), a = ana->data[i];
      double scale = fmax(1, fmax(fabs(a), fabs(num)));
      /* less the difference's own rounding: a loss of size L loses about
         eps * L / h of the quotient to it */
      double noise = 4 * 2.220446049250313e-16 * fmax(fabs(up), fabs(down)) / h;
      double e = fabs(a - num) / scale, b = e != e ? e : fmax(0, fabs(a - num) - noise) / scale; /* NaN stays NaN */
      if (e > err[k] || e != e) err[k] = e;
      if (b > beyond[k] || b != b) beyond[k] = b;
    }
    tensor_free(ana);
  }
}

void grad_vjp(Graph *g, const char *gy_name, Node ***diff, int *ndiff) {
  Node *out = g->output;
  Pos p = out->pos;
  if (out->kind != EK_REAL)
    ts_error(g->ctx, p, "a backward pass needs a real output: '%s' returns %s", g->entry ? g->entry : "the entry",
             elem_kind_name(out->kind));
  const char *name = gy_name;
  for (int t = 2;; t++) {
    bool taken = false;
    for (int i = 0; i < g->ninputs && !taken; i++) taken = !strcmp(g->inputs[i]->name, name);
    if (!taken) break;
    name = arena_printf(g->ctx->arena, "%s_%d", gy_name, t);
  }
  /* every real input differentiated: the roles say which grad_build takes */
  int n = g->ninputs;
  InputRole *role = arena_alloc(g->ctx->arena, sizeof(InputRole) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    role[i] = g->inputs[i]->role;
    if (g->inputs[i]->kind == EK_REAL) g->inputs[i]->role = ROLE_PARAM;
  }
  Node *gy = ir_input(g, name, ROLE_TENSOR, &out->shape, p);
  Node *loss = ir_binary(g, OP_MUL, out, gy, p);
  for (int a = 0; a < out->shape.rank; a++) loss = ir_reduce(g, OP_SUM, loss, a, p); /* keeps the axis, size 1 */
  g->output = loss;
  Grads gr = grad_build(g);
  for (int i = 0; i < n; i++) g->inputs[i]->role = role[i];
  Node **flat = arena_alloc(g->ctx->arena, sizeof(Node *) * (size_t)(gr.n ? gr.n : 1));
  for (int k = 0; k < gr.n; k++) {
    Shape v = {.rank = 1};
    v.d[0].n = shape_numel(&gr.grad[k]->shape);
    flat[k] = ir_reshape(g, gr.grad[k], &v, p);
  }
  g->output = gr.n ? gr.n == 1 ? flat[0] : ir_concat(g, flat, gr.n, 0, p) : ir_const(g, 0, p);
  *diff = gr.param;
  *ndiff = gr.n;
}

void grad_backward_entry(Graph *g, Node ***diff, int *ndiff) {
  Node **d;
  int n;
  grad_vjp(g, "grad_out", &d, &n);
  g->entry = arena_printf(g->ctx->arena, "%s_backward", g->entry ? g->entry : "entry");
  if (diff) *diff = d;
  if (ndiff) *ndiff = n;
}
