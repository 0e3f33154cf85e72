/*
 * print.c: the graph IR's three printed forms.
 *
 * Design.  Text is the form people and golden tests read: one line per node,
 * in id order, `%id = op operands attributes : kind[shape]  @ where`, with a
 * header naming the entry and its inputs and a closing `return`.  It is fully
 * deterministic (no addresses, no hash order).  Dot draws the same DAG for
 * Graphviz, inputs and the output highlighted.  JSON is the machine form with
 * a fixed schema (see graph_print_json) written through util's Json writer.
 *
 * Op names come from the op_info table; the per-op attributes are written by
 * two switches over Op (text and JSON), each listing every op with no
 * default, so a new row in ops.def is flagged here by the compiler.  A
 * position prints as `file:line:col`; a node expanded from a definition
 * prints its user-file call site first and then `(definition, position)`.
 */
#include <math.h>
#include <string.h>

#include "ir.h"

static const char *kind_str(ElemKind k) {
  switch (k) {
  case EK_REAL: return "real";
  case EK_INT: return "int";
  case EK_BOOL: return "bool";
  }
  return "?";
}

static const char *role_str(InputRole r) {
  switch (r) {
  case ROLE_TENSOR: return "tensor";
  case ROLE_PARAM: return "param";
  case ROLE_INDEX: return "index";
  }
  return "?";
}

/* "file:line:col", or "?" when the position is unknown. */
static const char *pos_str(Pos p, char *buf, size_t n) {
  if (!p.file) snprintf(buf, n, "?");
  else snprintf(buf, n, "%s:%u:%u", p.file->name, p.line, p.col);
  return buf;
}

static bool pos_same(Pos a, Pos b) {
  return a.file == b.file && a.line == b.line && a.col == b.col;
}

/* The shortest exact spelling, with non-finite values spelled inf, -inf, nan. */
static const char *num_str(double v, char *buf, size_t n) {
  if (isnan(v)) snprintf(buf, n, "nan");
  else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
  else fmt_double(buf, n, v);
  return buf;
}

/* The operands, then the attributes: " %1, %2 axis=3". */
static void node_args(const Node *n, char *buf, size_t cap) {
  size_t k = 0;
  char num[64];
  buf[0] = '\0';
#define PUT(...) (k += (size_t)snprintf(buf + k, k < cap ? cap - k : 0, __VA_ARGS__))
  for (int i = 0; i < n->nin; i++) PUT("%s%%%d", i ? ", " : " ", n->in[i]->id);
  switch (op_info[n->op].attrs) {
  case ATTR_NONE: break;
  case ATTR_INPUT:
    PUT(" %s", n->name ? n->name : "?");
    if (n->role != ROLE_TENSOR) PUT(" (%s)", role_str(n->role));
    break;
  case ATTR_VALUE: PUT(" %s", num_str(n->value, num, sizeof num)); break;
  case ATTR_SIZE: PUT(" %lld", (long long)n->shape.d[0].n); break;
  case ATTR_AXIS: PUT(" axis=%d", n->axis); break;
  case ATTR_PERM:
    for (int i = 0; i < n->shape.rank; i++) PUT("%s%d", i ? ", " : " [", n->perm[i]);
    PUT("]");
    break;
  case ATTR_SLICE: PUT(" [%lld:%lld] axis=%d", (long long)n->lo, (long long)n->hi, n->axis); break;
  }
#undef PUT
}

/* ---- text ---- */

static void print_where(FILE *out, const Node *n) {
  char a[512], b[512];
  if (!n->site.file && !n->pos.file) return;
  fprintf(out, "  @ %s", pos_str(n->site.file ? n->site : n->pos, a, sizeof a));
  if (n->via && n->pos.file && !pos_same(n->pos, n->site))
    fprintf(out, " (%s, %s)", n->via, pos_str(n->pos, b, sizeof b));
}

void graph_print_text(FILE *out, const Graph *g) {
  char args[1024], shape[1024];
  fprintf(out, "graph %s(", g->entry ? g->entry : "main");
  for (int i = 0; i < g->ninputs; i++)
    fprintf(out, "%s%s", i ? ", " : "", g->inputs[i]->name ? g->inputs[i]->name : "?");
  if (g->output) fprintf(out, ") -> %%%d\n", g->output->id);
  else fprintf(out, ") -> ?\n");
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    node_args(n, args, sizeof args);
    fprintf(out, "  %%%d = %s%s : %s%s", n->id, op_info[n->op].name, args, kind_str(n->kind),
            shape_str(&n->shape, shape, sizeof shape));
    print_where(out, n);
    fputc('\n', out);
  }
  if (g->output) fprintf(out, "  return %%%d\n", g->output->id);
}

/* ---- dot ---- */

static void dot_escaped(FILE *out, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', out);
    if (*s == '\n') fputs("\\n", out);
    else fputc(*s, out);
  }
}

static void dot_node(FILE *out, const Graph *g, const Node *n) {
  char args[1024], shape[1024];
  node_args(n, args, sizeof args);
  fprintf(out, "  n%d [label=\"%%%d = ", n->id, n->id);
  dot_escaped(out, op_info[n->op].name);
  dot_escaped(out, args);
  fputs("\\n", out);
  dot_escaped(out, kind_str(n->kind));
  dot_escaped(out, shape_str(&n->shape, shape, sizeof shape));
  fputc('"', out);
  if (n == g->output) fputs(", style=filled, fillcolor=\"#ffd8c8\", peripheries=2", out);
  else if (n->op == OP_INPUT) fputs(", style=filled, fillcolor=\"#cfe6ff\"", out);
  fputs("];\n", out);
}

void graph_print_dot(FILE *out, const Graph *g) {
  fputs("digraph \"", out);
  dot_escaped(out, g->entry ? g->entry : "main");
  fputs("\" {\n  node [shape=box, fontname=\"monospace\"];\n", out);
  for (int i = 0; i < g->nnodes; i++) dot_node(out, g, g->nodes[i]);
  for (int i = 0; i < g->nnodes; i++) {
    const Node *n = g->nodes[i];
    for (int j = 0; j < n->nin; j++) {
      fprintf(out, "  n%d -> n%d", n->in[j]->id, n->id);
      if (n->nin > 1) fprintf(out, " [label=\"%d\"]", j);
      fputs(";\n", out);
    }
  }
  fputs("}\n", out);
}

/* ---- JSON ---- */

static void json_pos(Json *j, const char *key, Pos p) {
  char buf[512];
  json_key(j, key);
  if (p.file) json_str(j, pos_str(p, buf, sizeof buf));
  else json_null(j);
}

static void json_attrs(Json *j, const Node *n) {
  switch (op_info[n->op].attrs) {
  case ATTR_NONE:
  case ATTR_SIZE: /* the size is the shape */
    break;
  case ATTR_INPUT:
    json_key(j, "name");
    json_str(j, n->name ? n->name : "");
    json_key(j, "role");
    json_str(j, role_str(n->role));
    break;
  case ATTR_VALUE:
    json_key(j, "value");
    json_num(j, n->value);
    break;
  case ATTR_SLICE:
    json_key(j, "lo");
    json_int(j, n->lo);
    json_key(j, "hi");
    json_int(j, n->hi);
    /* fall through */
  case ATTR_AXIS:
    json_key(j, "axis");
    json_int(j, n->axis);
    break;
  case ATTR_PERM:
    json_key(j, "perm");
    json_begin_arr(j);
    for (int i = 0; i < n->shape.rank; i++) json_int(j, n->perm[i]);
    json_end_arr(j);
    break;
  }
}

static void json_node(Json *j, const Node *n) {
  json_begin_obj(j);
  json_key(j, "id");
  json_int(j, n->id);
  json_key(j, "op");
  json_str(j, op_info[n->op].name);
  json_key(j, "kind");
  json_str(j, kind_str(n->kind));
  json_key(j, "shape");
  json_begin_arr(j);
  for (int i = 0; i < n->shape.rank; i++) json_int(j, n->shape.d[i].n);
  json_end_arr(j);
  json_key(j, "sym");
  json_begin_arr(j);
  for (int i = 0; i < n->shape.rank; i++) {
    if (n->shape.d[i].sym) json_str(j, n->shape.d[i].sym);
    else json_null(j);
  }
  json_end_arr(j);
  json_key(j, "in");
  json_begin_arr(j);
  for (int i = 0; i < n->nin; i++) json_int(j, n->in[i]->id);
  json_end_arr(j);
  json_pos(j, "pos", n->pos);
  json_pos(j, "site", n->site);
  json_key(j, "via");
  if (n->via) json_str(j, n->via);
  else json_null(j);
  json_attrs(j, n);
  json_end_obj(j);
}

/* {"entry": name, "inputs": [{"name", "role", "node", and how random values are
               drawn (ir/inputs.c): "bound" for an Index, "fan_in" for a weight}],
    "output": id or null,
    "nodes": [{"id", "op", "kind", "shape", "sym", "in", "pos", "site", "via",
               op-specific: "name"/"role", "value", "axis", "perm", "lo"/"hi"}]} */
void graph_print_json(FILE *out, const Graph *g) {
  Json j;
  memset(&j, 0, sizeof j);
  j.f = out;
  json_begin_obj(&j);
  json_key(&j, "entry");
  json_str(&j, g->entry ? g->entry : "main");
  json_key(&j, "inputs");
  json_begin_arr(&j);
  for (int i = 0; i < g->ninputs; i++) {
    const Node *in = g->inputs[i];
    json_begin_obj(&j);
    json_key(&j, "name");
    json_str(&j, in->name ? in->name : "");
    json_key(&j, "role");
    json_str(&j, role_str(in->role));
    json_key(&j, "node");
    json_int(&j, in->id);
    int64_t fan_in = ir_fan_in(g, in);
    if (in->kind == EK_INT) {
      json_key(&j, "bound");
      json_int(&j, ir_index_bound(g, in));
    } else if (fan_in > 0) {
      json_key(&j, "fan_in");
      json_int(&j, fan_in);
    }
    json_end_obj(&j);
  }
  json_end_arr(&j);
  json_key(&j, "output");
  if (g->output) json_int(&j, g->output->id);
  else json_null(&j);
  json_key(&j, "nodes");
  json_begin_arr(&j);
  for (int i = 0; i < g->nnodes; i++) json_node(&j, g->nodes[i]);
  json_end_arr(&j);
  json_end_obj(&j);
}
