/*
 * cmd_hparams.c: `tilesmith hparams`, the parametrization and optimizer
 * plan of a model under which its hyperparameters transfer across width
 * and depth (the analysis and the rules are src/hparams): a table with the
 * reason for each Param, --json, and --emit-pytorch, a module with an init
 * function and torch.optim parameter groups for the user's own model.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "../hparams/hparams.h"
#include "cli.h"

/* "D=128,F=352" or "D" into syms (base 0: the entry's own value) */
static int parse_syms(const char *spec, HpSym *syms, int max, int *n, const char *what) {
  char *copy = strdup(spec), *save = NULL;
  int rc = EXIT_OK;
  for (char *t = strtok_r(copy, ",", &save); t && rc == EXIT_OK; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    if (eq) *eq = 0;
    if (!*t || *n >= max) {
      rc = usage_error("%s expects SYM[=BASE][,SYM[=BASE]...] (at most %d symbols)", what, max);
      break;
    }
    int64_t base = 0;
    if (eq) {
      char *end;
      errno = 0;
      long long v = strtoll(eq + 1, &end, 10);
      if (errno || *end || v < 1) {
        rc = usage_error("%s %s=%s: the base size must be a positive whole number", what, t, eq + 1);
        break;
      }
      base = v;
    }
    syms[(*n)++] = (HpSym){strdup(t), base};
  }
  free(copy);
  return rc;
}

static int64_t bound(const SizeArg *b, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(b[i].name, name)) return b[i].value;
  return -1;
}

static void fmt_init(const HpParam *p, char *buf, size_t n) {
  if (p->init_std > 0) snprintf(buf, n, "std %.4g", p->init_std);
  else snprintf(buf, n, "= %g", p->init_value);
}

/* each width symbol's size over its base (they may grow apart) */
static double width_mult_of(const HpOpts *ho, int i) {
  return (double)bound(ho->bind, ho->nbind, ho->width[i].name) / (double)ho->width[i].base;
}

/* "D × 2" or "D × 2, F × 4" */
static const char *width_says(const HpOpts *ho, char *buf, size_t len) {
  size_t at = 0;
  for (int i = 0; i < ho->nwidth && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s × %.4g", i ? ", " : "", ho->width[i].name, width_mult_of(ho, i));
  return buf;
}

static void print_table(const HpPlan *pl, const HpOpts *ho, const Opts *o) {
  char ws[256];
  printf("hparams %s: width %s of the base", o->entry, width_says(ho, ws, sizeof ws));
  if (ho->depth.name) printf("; depth %s × %.4g", ho->depth.name, pl->depth_mult);
  printf("; %s; %s\n", pl->opt == HP_MUON ? "Muon for hidden matrices, AdamW for the rest" : "AdamW",
         ho->depth.name ? (pl->alpha == 1 ? "CompleteP (α = 1)" : "depth-μP (α = ½)") : "μP");
  if (ho->depth.name) {
    printf("residual blocks: multiply each block's update by %.4g ((L/L_base)^-α): x + %.4g · f(x)",
           pl->branch_mult, pl->branch_mult);
    int nl = 0; /* where tilesmith's trainer applies it */
    for (int i = 0; i < pl->n; i++)
      if (pl->params[i].branch_last) printf("%s%s", nl++ ? ", " : "; tilesmith's trainer scales the output of ", pl->params[i].param->name);
    printf("\n");
  }
  printf("\n%-10s %-22s %-9s %-5s %-6s %-14s %-8s %-8s %-8s %-8s %s\n", "param", "shape", "role", "block", "opt",
         "init", "lr ×", "out ×", "wd ×", "eps ×", "source");
  for (int i = 0; i < pl->n; i++) {
    const HpParam *p = &pl->params[i];
    char sh[128], init[48], src[160] = "";
    fmt_init(p, init, sizeof init);
    if (p->param->pos.file) snprintf(src, sizeof src, "%s:%d", p->param->pos.file->name, p->param->pos.line);
    printf("%-10s %-22s %-9s %-5s %-6s %-14s %-8.4g %-8.4g %-8.4g %-8.4g %s\n", p->param->name,
           shape_str(&p->param->shape, sh, sizeof sh), hp_role_name(p->role), p->depth_branch ? "yes" : "no",
           p->muon ? "muon" : "adamw", init, p->lr_mult, p->output_mult, p->wd_mult, p->eps_mult, src);
  }
  int nb = 0;
  for (int i = 0; i < pl->n; i++) {
    const HpParam *p = &pl->params[i];
    if (p->between && (p->role == HP_INPUT || p->role == HP_READOUT) && p->fan_in_width != p->fan_out_width)
      printf("%s%s", nb++ ? ", " : "\nnote: ", p->param->name);
  }
  if (nb)
    printf(": %s between two matrix products with one side of a fixed size, as a hidden layer whose width was not "
           "named; if that size grows with the width, name its symbol in --width (D=128,F=512)\n",
           nb == 1 ? "sits" : "sit");
  for (int i = 0; i < pl->n; i++)
    if (pl->params[i].tied)
      printf("\nnote: %s is gathered (an embedding) and also multiplied (tied to the output layer): the plan scales "
             "it as an embedding; μP's readout multiplier for the tied use cannot be expressed on one tensor\n",
             pl->params[i].param->name);
  printf("\nwhy:\n");
  for (int i = 0; i < pl->n; i++) printf("  %s: %s\n", pl->params[i].param->name, pl->params[i].reason);
}

static void print_json(const HpPlan *pl, const HpOpts *ho, const Opts *o) {
  Json j = {.f = stdout, .pretty = true};
  json_begin_obj(&j);
  json_kstr(&j, "entry", o->entry);
  json_key(&j, "width");
  json_begin_arr(&j);
  for (int i = 0; i < ho->nwidth; i++) {
    json_begin_obj(&j);
    json_kstr(&j, "symbol", ho->width[i].name);
    json_kint(&j, "base", ho->width[i].base);
    json_kint(&j, "value", bound(ho->bind, ho->nbind, ho->width[i].name));
    json_knum(&j, "mult", width_mult_of(ho, i));
    json_end_obj(&j);
  }
  json_end_arr(&j);
  json_key(&j, "depth");
  if (ho->depth.name) {
    json_begin_obj(&j);
    json_kstr(&j, "symbol", ho->depth.name);
    json_kint(&j, "base", ho->depth.base);
    json_kint(&j, "value", bound(ho->bind, ho->nbind, ho->depth.name));
    json_end_obj(&j);
  } else {
    json_null(&j);
  }
  json_knum(&j, "width_mult", pl->width_mult);
  json_knum(&j, "depth_mult", pl->depth_mult);
  json_knum(&j, "alpha", pl->alpha);
  json_knum(&j, "branch_mult", pl->branch_mult);
  json_kstr(&j, "optimizer", pl->opt == HP_MUON ? "muon" : "adamw");
  json_kstr(&j, "parametrization", ho->depth.name ? (pl->alpha == 1 ? "completep" : "depth-mup") : "mup");
  json_key(&j, "params");
  json_begin_arr(&j);
  for (int i = 0; i < pl->n; i++) {
    const HpParam *p = &pl->params[i];
    json_begin_obj(&j);
    json_kstr(&j, "name", p->param->name);
    json_key(&j, "shape");
    json_begin_arr(&j);
    for (int d = 0; d < p->param->shape.rank; d++) json_int(&j, p->param->shape.d[d].n);
    json_end_arr(&j);
    json_kstr(&j, "role", hp_role_name(p->role));
    json_key(&j, "depth_branch");
    json_bool(&j, p->depth_branch);
    json_key(&j, "ends_branch"); /* its product ends the block: where the branch multiplier applies */
    json_bool(&j, p->branch_last);
    json_key(&j, "tied"); /* an embedding also used as a readout */
    json_bool(&j, p->tied);
    json_key(&j, "depth_dim");
    if (p->depth_dim >= 0) json_int(&j, p->depth_dim);
    else json_null(&j);
    json_kstr(&j, "optimizer", p->muon ? "muon" : "adamw");
    json_kint(&j, "fan_in", p->fan_in);
    json_kint(&j, "fan_out", p->fan_out);
    json_knum(&j, "init_std", p->init_std);
    json_knum(&j, "init_value", p->init_value);
    json_knum(&j, "lr_mult", p->lr_mult);
    json_knum(&j, "output_mult", p->output_mult);
    json_knum(&j, "wd_mult", p->wd_mult);
    json_knum(&j, "eps_mult", p->eps_mult);
    json_kstr(&j, "reason", p->reason);
    if (p->param->pos.file) {
      char src[300];
      snprintf(src, sizeof src, "%s:%d:%d", p->param->pos.file->name, p->param->pos.line, p->param->pos.col);
      json_kstr(&j, "source", src);
    }
    json_end_obj(&j);
  }
  json_end_arr(&j);
  json_end_obj(&j);
  printf("\n");
}

/* The Python module: the table as data, init_() and param_groups(). */
static bool emit_pytorch(const HpPlan *pl, const HpOpts *ho, const Opts *o, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tilesmith: error: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  fprintf(f, "\"\"\"Parametrization of '%s' (%s) written by `tilesmith hparams`.\n\n", o->entry, o->file);
  char ws[256];
  fprintf(f, "Width %s of the base", width_says(ho, ws, sizeof ws));
  if (ho->depth.name) fprintf(f, ", depth %s × %.6g", ho->depth.name, pl->depth_mult);
  fprintf(f, "; %s.\n\n", pl->opt == HP_MUON ? "Muon for hidden matrices, AdamW for the rest" : "AdamW");
  fputs("Use on your own model: name its tensors as the Lean program names its Params\n"
        "(a list of tensors for a Param stacked along the depth, one per block),\n"
        "then\n\n"
        "    init_(named)                       # draw every tensor as the table says\n"
        "    adamw, muon = param_groups(named, lr=..., weight_decay=..., eps=...)\n"
        "    opt = torch.optim.AdamW(adamw)     # and a Muon optimizer over `muon`, if any\n\n"
        "and in the forward pass multiply each residual block's update by\n"
        "BRANCH_MULT (x + BRANCH_MULT * f(x)) and each readout's output by its\n"
        "OUTPUT_MULT.  The reasons are in PARAMS[name][\"reason\"].\n\"\"\"\n", f);
  fputs("import torch\n\n", f);
  fprintf(f, "WIDTH_MULT = %.17g  # the first width symbol's\nDEPTH_MULT = %.17g\nALPHA = %.17g\nBRANCH_MULT = %.17g\n\n", pl->width_mult,
          pl->depth_mult, pl->alpha, pl->branch_mult);
  fputs("PARAMS = {\n", f);
  for (int i = 0; i < pl->n; i++) {
    const HpParam *p = &pl->params[i];
    fprintf(f, "    \"%s\": dict(role=\"%s\", depth_branch=%s, ends_branch=%s, optimizer=\"%s\", init_std=%.17g,\n"
               "        init_value=%.17g, lr_mult=%.17g, output_mult=%.17g, wd_mult=%.17g, eps_mult=%.17g,\n        reason=",
            p->param->name, hp_role_name(p->role), p->depth_branch ? "True" : "False", p->branch_last ? "True" : "False",
            p->muon ? "muon" : "adamw",
            p->init_std, p->init_value, p->lr_mult, p->output_mult, p->wd_mult, p->eps_mult);
    fputc('"', f);
    for (const char *c = p->reason; *c; c++) {
      if (*c == '"' || *c == '\\') fputc('\\', f);
      fputc(*c, f);
    }
    fputs("\"),\n", f);
  }
  fputs("}\n\nOUTPUT_MULT = {k: v[\"output_mult\"] for k, v in PARAMS.items() if v[\"output_mult\"] != 1.0}\n\n", f);
  fputs("\n"
        "def _tensors(v):\n"
        "    return list(v) if isinstance(v, (list, tuple)) else [v]\n"
        "\n\n"
        "def _check(named):\n"
        "    unknown = sorted(set(named) - set(PARAMS))\n"
        "    if unknown:\n"
        "        raise KeyError(\"not Params of the Lean model: %s (it has %s)\" % (\", \".join(unknown), \", \".join(PARAMS)))\n"
        "    missing = sorted(set(PARAMS) - set(named))\n"
        "    if missing:\n"
        "        raise KeyError(\"Params of the Lean model not given: %s\" % \", \".join(missing))\n"
        "\n\n"
        "@torch.no_grad()\n"
        "def init_(named, generator=None):\n"
        "    \"\"\"Draw every tensor of named ({Param name: tensor or list of tensors}) in place.\"\"\"\n"
        "    _check(named)\n"
        "    for name, v in named.items():\n"
        "        spec = PARAMS[name]\n"
        "        for t in _tensors(v):\n"
        "            if spec[\"init_std\"] > 0:\n"
        "                t.normal_(0.0, spec[\"init_std\"], generator=generator)\n"
        "            else:\n"
        "                t.fill_(spec[\"init_value\"])\n"
        "\n\n"
        "def param_groups(named, lr, weight_decay=0.0, eps=1e-8):\n"
        "    \"\"\"(adamw_groups, muon_groups): torch.optim parameter groups, one per Param,\n"
        "    with the base lr, weight_decay and eps scaled by the table's multipliers.\"\"\"\n"
        "    _check(named)\n"
        "    adamw, muon = [], []\n"
        "    for name, v in named.items():\n"
        "        spec = PARAMS[name]\n"
        "        group = dict(params=_tensors(v), lr=lr * spec[\"lr_mult\"], weight_decay=weight_decay * spec[\"wd_mult\"],\n"
        "                     name=name)\n"
        "        if spec[\"optimizer\"] == \"muon\":\n"
        "            muon.append(group)\n"
        "        else:\n"
        "            group[\"eps\"] = eps * spec[\"eps_mult\"]\n"
        "            adamw.append(group)\n"
        "    return adamw, muon\n", f);
  bool ok = !ferror(f);
  ok &= fclose(f) == 0;
  if (!ok) fprintf(stderr, "tilesmith: error: cannot write %s\n", path);
  else printf("wrote %s: init_() and param_groups() for %d Params of '%s'\n", path, pl->n, o->entry);
  return ok;
}

/* Load and elaborate the entry with the width and depth symbols of
   --width/--depth (a symbol the entry leaves unbound and --size does not
   give is taken at its base), then take their bases (default: the entry's
   own values).  EXIT_OK, or the exit status (message printed). */
/* --batch N: the size that names the first dimension of the entry's first
   data input (a Tensor or Index whose leading dimension is one of its Nat
   parameters, as B in x : Tensor [B, I]) is bound to N. */
static int bind_batch(Session *s, Opts *o) {
  const Decl *d = program_find(&s->prog, o->entry);
  if (!d) return EXIT_OK; /* elaboration reports the unknown entry */
  const char *sym = NULL;
  for (int i = 0; i < d->nparams && !sym; i++) {
    const TypeAst *t = d->params[i].type;
    if (!t || (t->kind != TY_TENSOR && t->kind != TY_INDEX) || t->ndims < 1 || t->dims[0]->kind != AST_VAR) continue;
    for (int k = 0; k < d->nparams; k++)
      if (d->params[k].type && d->params[k].type->kind == TY_NAT && !strcmp(d->params[k].name, t->dims[0]->name))
        sym = d->params[k].name;
  }
  if (!sym) {
    fprintf(stderr,
            "tilesmith: error: --batch: no data input of '%s' has a size parameter as its first dimension (a "
            "definition with fixed sizes fixes its batch: train the generic one, or bind the size with --size)\n",
            o->entry);
    return EXIT_USER;
  }
  for (int k = 0; k < o->nsizes; k++)
    if (!strcmp(o->sizes[k].name, sym)) {
      if (o->sizes[k].value == o->batch) return EXIT_OK;
      return usage_error("--batch %lld and --size %s=%lld both set the batch", (long long)o->batch, sym,
                         (long long)o->sizes[k].value);
    }
  if (o->nsizes >= 64) return usage_error("too many sizes");
  o->sizes[o->nsizes++] = (SizeArg){sym, o->batch, false};
  return EXIT_OK;
}

/* Is sym one of the entry's Nat parameters (have, from entry_bindings)?
   If not, said as the option that named it; an entry whose parameters
   could not be listed is left to the elaboration's own message. */
bool nat_named(const SizeArg *have, int nhave, const char *sym, const char *flag, const char *entry) {
  if (!nhave) return true;
  for (int k = 0; k < nhave; k++)
    if (!strcmp(have[k].name, sym)) return true;
  fprintf(stderr, "tilesmith: error: %s %s: '%s' is not a Nat parameter of '%s' (its Nat parameters:", flag, sym, sym,
          entry);
  for (int k = 0; k < nhave; k++) fprintf(stderr, " %s", have[k].name);
  fprintf(stderr, ")\n");
  return false;
}

int hparams_setup(Session *s, Opts *o, HpOpts *ho, Graph **gp) {
  *gp = NULL;
  memset(ho, 0, sizeof *ho);
  ho->alpha = o->has_alpha ? o->alpha : 1;
  if (o->width_spec && parse_syms(o->width_spec, ho->width, HP_MAX_WIDTH, &ho->nwidth, "--width")) return EXIT_USAGE;
  if (o->depth_spec) {
    int nd = 0;
    if (parse_syms(o->depth_spec, &ho->depth, 1, &nd, "--depth")) return EXIT_USAGE;
  }
  if (!load(s, o->file)) return EXIT_USER;
  if (o->batch > 0) {
    int rc = bind_batch(s, o);
    if (rc != EXIT_OK) return rc;
  }
  SizeArg have[64];
  int nhave = entry_bindings(s, o, have, 64);
  HpSym *all[HP_MAX_WIDTH + 1];
  int nall = 0;
  for (int i = 0; i < ho->nwidth; i++) all[nall++] = &ho->width[i];
  if (ho->depth.name) all[nall++] = &ho->depth;
  for (int i = 0; i < nall; i++)
    for (int k = 0; k < i; k++)
      if (!strcmp(all[i]->name, all[k]->name))
        return usage_error("'%s' is named twice in --width and --depth: a size scales as the width or as the depth",
                           all[i]->name);
  for (int i = 0; i < nall; i++)
    if (!nat_named(have, nhave, all[i]->name, i < ho->nwidth ? "--width" : "--depth", o->entry)) return EXIT_USER;
  for (int i = 0; i < nall; i++) {
    int64_t v = bound(have, nhave, all[i]->name);
    for (int k = 0; k < o->nsizes; k++)
      if (!strcmp(o->sizes[k].name, all[i]->name)) v = o->sizes[k].value;
    if (v <= 0 && all[i]->base > 0 && o->nsizes < 64) o->sizes[o->nsizes++] = (SizeArg){all[i]->name, all[i]->base, false};
  }
  Graph *g = elaborate(s, o, o->entry);
  if (!g) return EXIT_USER;
  o->nbind = entry_bindings(s, o, o->bind, 64);
  for (int i = 0; i < nall; i++) {
    int64_t v = bound(o->bind, o->nbind, all[i]->name);
    if (v <= 0) {
      fprintf(stderr, "tilesmith: error: '%s' is not a Nat parameter of '%s'%s\n", all[i]->name, o->entry,
              o->nbind ? "" : " (it has none)");
      return EXIT_USER;
    }
    if (!all[i]->base) all[i]->base = v;
  }
  if (ho->depth.name) { /* the depth stacks Params [L, ...] read as W[l] in `layers` */
    if (!hp_has_stack(g, ho->depth.name)) {
      fprintf(stderr, "tilesmith: error: --depth %s: no Param of '%s' is stacked along %s (a Param [%s, ...] read as "
                      "W[l] inside `layers`); the depth is the number of repeated blocks\n",
              ho->depth.name, o->entry, ho->depth.name, ho->depth.name);
      return EXIT_USER;
    }
  }
  ho->bind = o->bind;
  ho->nbind = o->nbind;
  /* muon, auto: Muon where there are hidden matrices */
  ho->opt = o->optimizer && (!strcmp(o->optimizer, "muon") || !strcmp(o->optimizer, "auto")) ? HP_MUON : HP_ADAMW;
  *gp = g;
  return EXIT_OK;
}

void hparams_free(HpOpts *ho) {
  for (int i = 0; i < ho->nwidth; i++) free((void *)ho->width[i].name);
  free((void *)ho->depth.name);
}

int cmd_hparams(Opts *o) {
  HpOpts ho;
  Session s;
  session_open(&s);
  Graph *g = NULL;
  int rc = hparams_setup(&s, o, &ho, &g);
  if (rc != EXIT_OK) goto done;
  rc = EXIT_USER;
  HpPlan pl = hp_derive(g, &ho);
  if (!pl.n) {
    fprintf(stderr, "tilesmith: error: %s\n", pl.why);
    free(pl.params);
    goto done;
  }
  if (o->optimizer && !strcmp(o->optimizer, "auto")) {
    bool any = false;
    for (int i = 0; i < pl.n; i++) any |= pl.params[i].muon;
    if (!any) pl.opt = HP_ADAMW;
  }
  rc = EXIT_OK;
  if (o->emit_pytorch && !emit_pytorch(&pl, &ho, o, o->emit_pytorch)) rc = EXIT_USER;
  else if (o->format && !strcmp(o->format, "json")) print_json(&pl, &ho, o);
  else if (!o->emit_pytorch) print_table(&pl, &ho, o);
  free(pl.params);
done:
  hparams_free(&ho);
  session_close(&s);
  return rc;
}
