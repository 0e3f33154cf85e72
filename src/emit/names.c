/*
 * names.c: the Python names of an emitted module.
 *
 * Two kinds of name, kept apart so that neither can break the other.
 *
 * run()'s and reference()'s parameters are the entry's Lean parameter
 * names, spelled as Python spells them (py_spelling): a Lean name that is
 * already an ASCII Python identifier and no keyword is kept as it is, even
 * `k`, `i` or `torch`; any other gets a deterministic ASCII spelling, which
 * run()'s docstring lists.  Legal names are placed first, so a spelled name
 * that meets one (`x'` and a parameter `x_prime`) is the one to take a
 * suffix (`_2`, `_3`, ...).  The bodies of run() and reference() use no
 * name but module-level helpers whose prefix (Emit.pre, "_ts_") no
 * parameter begins with, so a parameter cannot shadow what they call.
 *
 * Inside the module (kernel parameters, the body of the helper that
 * launches the kernels) each global tensor has an internal name (Emit.gname):
 * the tile buffer's name, spelled the same way, with `_gN` appended while it
 * meets a name the kernels or the module use (loop and block variables,
 * modules, kernel and tile names, the reference's vN).  So a Lean `k`
 * (the kernels' loop variable) is `k_1` inside and `k` in run()'s signature.
 */
#include <string.h>

#include "emit.h"

/* Python's keywords, and __debug__, which no parameter may be named either. */
static const char *py_keywords[] = {
    "False",    "None",   "True",  "and",      "as",     "assert", "async",  "await",     "break",
    "class",    "continue", "def", "del",      "elif",   "else",   "except", "finally",   "for",
    "from",     "global", "if",    "import",   "in",     "is",     "lambda", "nonlocal",  "not",
    "or",       "pass",   "raise", "return",   "try",    "while",  "with",   "yield",     "__debug__"};

static bool is_py_keyword(const char *s) {
  for (size_t k = 0; k < sizeof py_keywords / sizeof py_keywords[0]; k++)
    if (!strcmp(s, py_keywords[k])) return true;
  return false;
}

static bool is_ascii_ident_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Already a Python identifier as it stands? */
static bool is_py_name(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (const char *p = s; *p; p++)
    if (!is_ascii_ident_char((unsigned char)*p)) return false;
  return !is_py_keyword(s);
}

static const char *greek[] = {"alpha", "beta", "gamma", "delta",   "epsilon", "zeta", "eta", "theta",
                              "iota",  "kappa", "lambda", "mu",     "nu",      "xi",   "omicron", "pi",
                              "rho",   "sigma", "sigma", "tau",    "upsilon", "phi",  "chi", "psi", "omega"};
static const char *sub_2090[] = {"a", "e", "o", "x", "schwa", "h", "k", "l", "m", "n", "p", "s", "t"};
static const char *sub_1d62[] = {"i", "r", "u", "v", "beta", "gamma", "rho", "phi", "chi"};

/* The spelling of one code point of a Lean identifier (into buf). */
static const char *spell_cp(uint32_t c, char buf[16]) {
  if (c < 0x80 && is_ascii_ident_char((unsigned char)c)) {
    buf[0] = (char)c, buf[1] = 0;
    return buf;
  }
  if (c == '\'') return "_prime";
  if (c == '!') return "_bang";
  if (c == '?') return "_qmark";
  if (c >= 0x2080 && c <= 0x2089) { /* subscript digits, as NFKC reads them */
    buf[0] = (char)('0' + (c - 0x2080)), buf[1] = 0;
    return buf;
  }
  if (c >= 0x2090 && c <= 0x209C) return sub_2090[c - 0x2090];
  if (c >= 0x1D62 && c <= 0x1D6A) return sub_1d62[c - 0x1D62];
  if (c >= 0x3B1 && c <= 0x3C9) return greek[c - 0x3B1];
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) { /* capitals: Delta */
    snprintf(buf, 16, "%s", greek[c - 0x391]);
    buf[0] = (char)(buf[0] - 'a' + 'A');
    return buf;
  }
  snprintf(buf, 16, "_u%04x", (unsigned)c);
  return buf;
}

/* See the file's comment: x' -> x_prime, W₁ -> W1, α -> alpha, pass -> pass_. */
static const char *py_spelling(Arena *a, const char *lean) {
  if (is_py_name(lean)) return lean;
  size_t n = strlen(lean);
  char *out = arena_alloc(a, 8 * n + 2), *o = out;
  for (size_t i = 0; i < n;) {
    uint32_t c;
    int k = utf8_decode((const unsigned char *)lean + i, n - i, &c);
    if (k <= 0) c = (unsigned char)lean[i], k = 1;
    char buf[16];
    const char *s = spell_cp(c, buf);
    size_t m = strlen(s);
    memcpy(o, s, m);
    o += m;
    i += (size_t)k;
  }
  *o = 0;
  if (out[0] >= '0' && out[0] <= '9') { /* cannot come from a Lean name; kept safe all the same */
    memmove(out + 1, out, (size_t)(o - out) + 1);
    out[0] = '_';
  }
  if (!*out || is_py_keyword(out)) return arena_printf(a, "%s_", out);
  return out;
}

/* Names the kernels and the module's own code use: no global may take one. */
static const char *py_reserved[] = {
    "float", "int", "len", "range", "min", "max", "abs", "pow", "sum", "print", "sys", "dev", "ft", "libdevice", "INF",
    "NAN", "out_idx", "statistics", "tensors", "args", "ref", "res", "compare", "bench", "random_inputs", "RTOL",
    "ATOL", "gen", "PRIM_FUNCS", "TRITON_KERNELS", "TARGET", "_COMPILED", "compiled_kernel", "main", "run",
    "reference", "torch", "triton", "tl", "T", "tilelang", "compile_only", "register", "i", "j", "k", "bx", "by", "bz", "_zero", "_mask",
    /* a Triton kernel's launch takes these as keywords beside its parameters
       (JITFunction.run's grid and warmup, the CUDA backend's options) */
    "grid", "warmup", "num_warps", "num_ctas", "num_stages", "warp_size", "maxnreg", "ptx_version", "ptx_options",
    "ir_override", "enable_fp_fusion", "enable_reflect_ftz", "launch_cooperative_grid", "launch_pdl",
    "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes", "default_dot_input_precision",
    "allowed_dot_input_precisions", "max_num_imprecise_acc_default", "extern_libs", "debug", "backend_name",
    "sanitize_overflow", "arch", "instrumentation_mode"};

/* s is prefix followed by one or more digits only? */
static bool prefix_digits(const char *s, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(s, prefix, n) || !s[n]) return false;
  for (const char *p = s + n; *p; p++)
    if (*p < '0' || *p > '9') return false;
  return true;
}

static bool name_taken(Emit *e, const char *s, int upto) {
  if (is_py_keyword(s)) return true;
  /* the kernels' coordinates and loop variables (i_8, j_1, k1) and masks (_mask_8_1) */
  if (prefix_digits(s, "i_") || prefix_digits(s, "j_") || prefix_digits(s, "k") || !strncmp(s, "_zero_", 6) ||
      !strncmp(s, "_mask_", 6) || prefix_digits(s, "Ost") || /* TileLang's staged stores (Ost3) */
      prefix_digits(s, "_tma"))                              /* Triton's tensor descriptors (_tma0) */
    return true;
  for (size_t r = 0; r < sizeof py_reserved / sizeof py_reserved[0]; r++)
    if (!strcmp(s, py_reserved[r])) return true;
  if (prefix_digits(s, "v")) return true; /* the reference's names (v12; v12_g1 is free) */
  for (int g = 0; g < upto; g++)
    if (e->gname[g] && !strcmp(e->gname[g], s)) return true;
  for (int k = 0; k < e->tp->kernels.len; k++) {
    const Kernel *K = e->tp->kernels.data[k];
    if (!strcmp(K->name, s)) return true;
    for (int b = 0; b < K->bufs.len; b++) {
      const char *t = K->bufs.data[b]->name;
      size_t n = strlen(t);
      /* and TileLang's acc_nan and staged row states (S3_s) */
      if (!strcmp(t, s) || (!strncmp(t, s, n) && (!strcmp(s + n, "_nan") || !strcmp(s + n, "_s")))) return true;
    }
  }
  return false;
}

static bool param_taken(Emit *e, const char *s, int upto) {
  for (int i = 0; i < upto; i++)
    if (e->pname[i] && !strcmp(e->pname[i], s)) return true;
  for (int i = upto; i < e->tp->g->ninputs; i++) /* the legal names, placed first */
    if (e->pname[i] && !strcmp(e->pname[i], s)) return true;
  return false;
}

void emit_assign_names(Emit *e) {
  Arena *a = e->a;
  const Graph *g = e->tp->g;
  int n = e->tp->globals.len, ni = g->ninputs;
  e->gname = arena_alloc(a, sizeof(char *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    const char *want = py_spelling(a, e->tp->globals.data[i]->name), *name = want;
    for (int t = 1; name_taken(e, name, i); t++) name = arena_printf(a, "%s_g%d", want, t);
    e->gname[i] = name;
  }
  e->pname = arena_alloc(a, sizeof(char *) * (size_t)(ni ? ni : 1));
  for (int i = 0; i < ni; i++) /* legal names first: they are kept */
    if (is_py_name(g->inputs[i]->name) && !param_taken(e, g->inputs[i]->name, i)) e->pname[i] = g->inputs[i]->name;
  for (int i = 0; i < ni; i++) {
    if (e->pname[i]) continue;
    const char *want = py_spelling(a, g->inputs[i]->name), *name = want;
    for (int t = 2; param_taken(e, name, i); t++) name = arena_printf(a, "%s_%d", want, t);
    e->pname[i] = name;
  }
  /* the helpers run() and reference() call: a prefix no parameter starts with */
  const char *pre = "_ts_";
  for (bool clash = true; clash;) {
    clash = false;
    for (int i = 0; i < ni && !clash; i++) clash = !strncmp(e->pname[i], pre, strlen(pre));
    if (clash) pre = arena_printf(a, "_%s", pre);
  }
  e->pre = pre;
  /* run()'s keyword-only output buffer: out, unless a parameter is named so */
  const char *outkw = "out";
  while (param_taken(e, outkw, ni)) outkw = arena_printf(a, "%s_", outkw);
  e->outkw = outkw;
}
