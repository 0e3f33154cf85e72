/*
 * resolve.c: names and static arities, checked for every definition when a
 * file is loaded.
 *
 * Lean resolves the names of a definition when it is written, not when it
 * is used, so a misspelt name in a generic definition is an error even if
 * nothing ever elaborates it.  front_load runs this pass over every
 * declaration, the prelude's and the user's, generic or concrete.  A name
 * must be, innermost first, a binder of the declaration, a `let`, a `fun`
 * parameter, a declaration that comes earlier (so none can call itself or a
 * later one) or a builtin; binder types see the binders before them.  The
 * pass also checks what a call's arity shows without sizes: a named
 * argument names a parameter, once; a known declaration or builtin whose
 * result is never a function gets no more positional arguments than it has
 * explicit parameters; the function given to `layers` takes the layer index
 * and the carried value.
 *
 * The rules and their messages live here once: elaboration (elab.c)
 * resolves names with name_resolve and reports with the same functions, so
 * a name means the same thing, and fails with the same words, in both.
 *
 * Whether a result may be a function is decided conservatively: literals,
 * operators, lists and saturated calls of declarations or builtins known to
 * return values are values; a local, an index, a partial application or
 * anything unknown may be a function, and then no arity error is raised.
 * The verdict is kept in Decl.returns_value (for later declarations) and
 * Ast.returns_value of a `fun` (for elaboration's check of `layers`).
 *
 * A declaration whose body is a type (`abbrev Shape := List Nat`,
 * `abbrev Param (s : Shape) := Tensor s`) is Lean's: types are written in
 * binders, where the parser reads them itself, so such a body is never
 * evaluated and is not resolved (Decl.is_type).
 *
 * The walk recurses over the AST; the parser bounds every tree's height
 * (MAX_TREE_HEIGHT), so the recursion is bounded too.
 */
#include "value.h"

/* ---- names ---- */

Name name_resolve(const Program *prog, const char *name, Env *env, int scope) {
  Name r = {0};
  for (int pass = 0; pass < 2; pass++) {
    Env *e = env_find(env, name);
    if (e) {
      r.kind = NAME_LOCAL;
      r.local = e;
      return r;
    }
    int index;
    const Decl *d = program_lookup(prog, name, scope, &index);
    if (d) {
      r.kind = NAME_DECL;
      r.decl = d;
      r.index = index;
      return r;
    }
    const Builtin *b = builtin_find(name);
    if (b) {
      r.kind = NAME_BUILTIN;
      r.builtin = b;
      return r;
    }
    /* a qualified name: try its last component (Tilesmith.softmax) */
    const char *last = strrchr(name, '.');
    if (!last || !last[1]) break;
    name = last + 1;
  }
  return r;
}

void name_check_projection(Ctx *c, Pos at, const char *name, Env *env) {
  const char *dot = strchr(name, '.');
  if (!dot) return;
  char head[128];
  snprintf(head, sizeof head, "%.*s", (int)(dot - name < 127 ? dot - name : 127), name);
  if (env_find(env, head))
    ts_error(c, at, "'%s': projection notation is not part of the tilesmith subset; write '%s %s'", name,
             strrchr(name, '.') + 1, head);
}

static void consider(const char *name, const char *cand, const char **best, int *bestd) {
  int d = edit_distance(name, cand, *bestd);
  if (d < *bestd || (d == *bestd && !*best)) {
    *best = cand;
    *bestd = d;
  }
}

const char *name_suggest(const Program *prog, const char *name, Env *env, int scope) {
  const char *best = NULL;
  int len = (int)strlen(name);
  int bestd = len <= 2 ? 0 : len / 4 + 1; /* short names suggest little */
  if (bestd > 3) bestd = 3;
  if (bestd == 0) return NULL;
  for (Env *e = env; e; e = e->next) consider(name, e->name, &best, &bestd);
  for (int i = 0; i < scope && i < prog->ndecls; i++) consider(name, prog->decls[i]->name, &best, &bestd);
  for (int i = 0; i < builtin_count; i++) consider(name, builtins[i].name, &best, &bestd);
  return best;
}

/* A definition of the user's file (not the prelude's: those are not
   entries one misspells). */
static bool users_decl(const Decl *d) { return !(d->pos.file && d->pos.file->is_prelude); }

void entry_unknown(Ctx *c, const Program *prog, const char *name) {
  const char *best = NULL;
  int len = (int)strlen(name), bestd = len / 2 + 1 < 4 ? len / 2 + 1 : 4; /* a short name suggests little */
  for (int i = 0; i < prog->ndecls; i++)
    if (users_decl(prog->decls[i])) consider(name, prog->decls[i]->name, &best, &bestd);
  if (best) ts_fatal(c, "no definition named '%s'; did you mean '%s'?", name, best);
  /* else the file's own definitions, the entries a user meant */
  char list[400] = "";
  size_t at = 0;
  int n = 0;
  for (int i = 0; i < prog->ndecls && at < sizeof list - 64; i++)
    if (users_decl(prog->decls[i]))
      at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", n++ ? ", " : "", prog->decls[i]->name);
  if (n) ts_fatal(c, "no definition named '%s' (the file defines %s)", name, list);
  ts_fatal(c, "no definition named '%s'", name);
}

void name_unknown(Ctx *c, const Program *prog, Pos at, const char *name, Env *env, int scope) {
  int later;
  if (program_lookup(prog, name, prog->ndecls, &later) && later >= scope)
    ts_error(c, at, "'%s' is not defined yet here: a definition may use only the definitions "
             "before it (so none can call itself)", name);
  const char *s = name_suggest(prog, name, env, scope);
  if (s) ts_error(c, at, "unknown name '%s'; did you mean '%s'?", name, s);
  ts_error(c, at, "unknown name '%s'", name);
}

void name_unknown_shape(Ctx *c, Pos at, const char *var, Env *env) {
  const char *best = NULL;
  int bestd = 2;
  for (Env *e = env; e; e = e->next) consider(var, e->name, &best, &bestd);
  if (best && strlen(var) > 1)
    ts_error(c, at, "unknown shape variable '%s'; did you mean '%s'? (or declare it as {%s : Shape})", var,
             best, var);
  ts_error(c, at, "unknown shape variable '%s'; declare it as {%s : Shape}", var, var);
}

/* ---- callees ---- */

Callee callee_decl(const Decl *d) {
  return (Callee){d->name, d->params, d->nparams, NULL, NULL, !d->returns_value};
}

Callee callee_builtin(const Builtin *b) {
  return (Callee){b->name, b->params, b->nparams, b->has_default, NULL, builtin_is_fold(b)};
}

Callee callee_lambda(const Ast *fun) {
  return (Callee){"fun", fun->params, fun->nparams, NULL, NULL, !fun->returns_value};
}

static bool still_explicit(const Callee *k, int i) {
  return !k->params[i].implicit && !(k->bound && k->bound[i]);
}

static bool optional(const Callee *k, int i) {
  return k->has_default ? k->has_default[i] : k->params[i].deflt != NULL;
}

void callee_arity(const Callee *k, int *least, int *most) {
  *least = *most = 0;
  for (int i = 0; i < k->nparams; i++)
    if (still_explicit(k, i)) {
      ++*most;
      if (!optional(k, i)) ++*least;
    }
}

const char *callee_param_names(Arena *a, const Callee *k) {
  const char *s = "";
  for (int i = 0; i < k->nparams; i++)
    if (still_explicit(k, i)) s = arena_printf(a, "%s%s%s", s, *s ? ", " : "", k->params[i].name);
  return s;
}

int callee_param(Ctx *c, Pos at, const Callee *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (strcmp(k->params[i].name, name) == 0) return i;
  /* the nearest parameter, unless reaching it rewrites all of it ('s' is
     not a suggestion for 'esp') */
  const char *best = NULL;
  int bd = 3;
  for (int j = 0; j < k->nparams; j++) {
    int d = edit_distance(name, k->params[j].name, bd);
    if (d < bd && d < (int)strlen(k->params[j].name)) bd = d, best = k->params[j].name;
  }
  if (best) ts_error(c, at, "'%s' has no parameter named '%s'; did you mean '%s'?", k->name, name, best);
  ts_error(c, at, "'%s' has no parameter named '%s'", k->name, name);
}

void callee_given_twice(Ctx *c, Pos at, const Callee *k, const char *name) {
  ts_error(c, at, "parameter '%s' of '%s' is given twice", name, k->name);
}

void callee_too_many(Ctx *c, Pos at, const Callee *k, const char *result) {
  int least, most;
  callee_arity(k, &least, &most);
  const char *takes = most == 0 ? "no explicit parameters"
                      : arena_printf(c->arena, "%d explicit parameter%s (%s)", most, most == 1 ? "" : "s",
                                     callee_param_names(c->arena, k));
  if (result) ts_error(c, at, "too many arguments: '%s' takes %s and returns %s", k->name, takes, result);
  ts_error(c, at, "too many arguments: '%s' takes %s, and its result is not a function", k->name, takes);
}

/* ---- the walk ---- */

typedef struct Resolver {
  Ctx *c;
  Program *prog;
  int scope;         /* the declaration being resolved: those before it are visible */
} Resolver;

static void resolve_expr(Resolver *R, Ast *a, Env *env);
static bool may_be_fun(Resolver *R, const Ast *a, Env *env);

static Env *bind(Resolver *R, Env *env, const char *name) {
  Env *e = arena_alloc(R->c->arena, sizeof *e);
  e->name = name;
  e->next = env;
  return e;
}

static void resolve_type(Resolver *R, const TypeAst *t, Env *env) {
  switch (t->kind) {
  case TY_NAT:
  case TY_INT:
  case TY_FLOAT:
  case TY_SHAPE: return;
  case TY_TENSOR:
  case TY_PARAM:
  case TY_INDEX:
    if (t->shapevar && !env_find(env, t->shapevar)) name_unknown_shape(R->c, t->shapevar_pos, t->shapevar, env);
    for (int k = 0; k < t->ndims; k++) resolve_expr(R, t->dims[k], env);
    return;
  case TY_LIST: resolve_type(R, t->elem, env); return;
  case TY_ARROW:
    resolve_type(R, t->from, env);
    resolve_type(R, t->to, env);
    return;
  }
}

/* Binders in order, each seeing the ones before it; a group `(a b : T := d)`
   shares T and d, resolved once in the scope before the group. */
static Env *resolve_binders(Resolver *R, const Binder *bs, int n, Env *env) {
  for (int k = 0; k < n; k++) {
    bool same = k > 0 && bs[k].type == bs[k - 1].type && bs[k].deflt == bs[k - 1].deflt;
    if (!same && bs[k].type) resolve_type(R, bs[k].type, env);
    if (!same && bs[k].deflt) resolve_expr(R, bs[k].deflt, env);
    env = bind(R, env, bs[k].name);
  }
  return env;
}

/* The declaration or builtin that f names (not a local), as a callee. */
static bool known_callee(Resolver *R, const Ast *f, Env *env, Callee *out, bool *fold) {
  if (f->kind != AST_VAR) return false;
  Name n = name_resolve(R->prog, f->name, env, R->scope);
  switch (n.kind) {
  case NAME_DECL:
    *out = callee_decl(n.decl);
    *fold = false;
    return true;
  case NAME_BUILTIN:
    *out = callee_builtin(n.builtin);
    *fold = builtin_is_fold(n.builtin);
    return true;
  case NAME_NONE:
  case NAME_LOCAL: return false;
  }
  return false;
}

/* Match the arguments of a call of k to its parameters as elaboration will
   (named ones by name, positional ones to the explicit parameters left in
   order); slot[j] receives argument j's parameter, or -1 where it goes to
   the result.  With `report`, errors are reported; returns whether the
   result may be a function. */
static bool match_call(Resolver *R, const Ast *a, const Callee *k, int *slot, bool report) {
  bool *taken = arena_alloc(R->c->arena, (size_t)(k->nparams ? k->nparams : 1));
  for (int j = 0; j < a->nargs; j++) {
    slot[j] = -1;
    const char *name = a->argnames ? a->argnames[j] : NULL;
    if (!name) continue;
    int i = report ? callee_param(R->c, a->args[j]->pos, k, name) : -1;
    if (!report)
      for (int q = 0; q < k->nparams; q++)
        if (!strcmp(k->params[q].name, name)) i = q;
    if (i < 0) return true;
    if (taken[i]) {
      if (report) callee_given_twice(R->c, a->args[j]->pos, k, name);
      return true;
    }
    taken[i] = true;
    slot[j] = i;
  }
  int next = 0;
  for (int j = 0; j < a->nargs; j++) {
    if (a->argnames && a->argnames[j]) continue;
    while (next < k->nparams && (k->params[next].implicit || taken[next])) next++;
    if (next == k->nparams) {
      if (k->returns_fun) return true; /* the rest goes to the result */
      if (report) callee_too_many(R->c, a->args[j]->pos, k, NULL);
      return true;
    }
    taken[next] = true;
    slot[j] = next;
  }
  for (int i = 0; i < k->nparams; i++)
    if (!k->params[i].implicit && !taken[i] && !optional(k, i)) return true; /* partial */
  return k->returns_fun;
}

/* The function given to `layers` must take the layer index and the value. */
static void check_step(Resolver *R, const Ast *f, Env *env) {
  while (f->kind == AST_PAREN) f = f->a;
  Callee k;
  bool fold;
  if (f->kind == AST_FUN) k = callee_lambda(f);
  else if (!known_callee(R, f, env, &k, &fold)) return;
  layers_check_step(R->c, f->pos, &k);
}

static void resolve_app(Resolver *R, Ast *a, Env *env) {
  resolve_expr(R, a->a, env);
  for (int j = 0; j < a->nargs; j++) resolve_expr(R, a->args[j], env);
  Callee k;
  bool fold;
  if (!known_callee(R, a->a, env, &k, &fold)) return;
  int *slot = arena_alloc(R->c->arena, sizeof(int) * (size_t)a->nargs);
  match_call(R, a, &k, slot, true);
  if (fold) /* layers n init f */
    for (int j = 0; j < a->nargs; j++)
      if (slot[j] == k.nparams - 1) check_step(R, a->args[j], env);
}

static void resolve_expr(Resolver *R, Ast *a, Env *env) {
  for (;;) {
    switch (a->kind) {
    case AST_NAT:
    case AST_FLOAT:
    case AST_STR: return;
    case AST_VAR:
      name_check_projection(R->c, a->pos, a->name, env);
      if (name_resolve(R->prog, a->name, env, R->scope).kind == NAME_NONE)
        name_unknown(R->c, R->prog, a->pos, a->name, env, R->scope);
      return;
    case AST_APP: resolve_app(R, a, env); return;
    case AST_BINOP:
    case AST_INDEX:
      resolve_expr(R, a->a, env);
      a = a->b;
      continue;
    case AST_NEG:
    case AST_TRANSPOSE:
    case AST_PAREN: a = a->a; continue;
    case AST_LIST:
      for (int j = 0; j < a->nargs; j++) resolve_expr(R, a->args[j], env);
      return;
    case AST_LET:
      /* the type and the value see the scope before the name (no recursion) */
      if (a->type) resolve_type(R, a->type, env);
      resolve_expr(R, a->a, env);
      env = bind(R, env, a->name);
      a = a->b;
      continue;
    case AST_FUN:
      env = resolve_binders(R, a->params, a->nparams, env);
      resolve_expr(R, a->a, env);
      a->returns_value = !may_be_fun(R, a->a, env);
      return;
    }
  }
}

/* May the value of a be a function?  (true when unknown) */
static bool may_be_fun(Resolver *R, const Ast *a, Env *env) {
  for (;;) {
    switch (a->kind) {
    case AST_NAT:
    case AST_FLOAT:
    case AST_STR:
    case AST_BINOP:
    case AST_NEG:
    case AST_TRANSPOSE:
    case AST_LIST: return false;
    case AST_PAREN: a = a->a; continue;
    case AST_LET:
      env = bind(R, env, a->name);
      a = a->b;
      continue;
    case AST_FUN:
    case AST_INDEX: return true;
    case AST_VAR: {
      Name n = name_resolve(R->prog, a->name, env, R->scope);
      switch (n.kind) {
      case NAME_DECL: return n.decl->nparams > 0 || !n.decl->returns_value;
      case NAME_BUILTIN: return n.builtin->nparams > 0;
      case NAME_LOCAL:
      case NAME_NONE: return true;
      }
      return true;
    }
    case AST_APP: {
      Callee k;
      bool fold;
      if (!known_callee(R, a->a, env, &k, &fold)) return true;
      int *slot = arena_alloc(R->c->arena, sizeof(int) * (size_t)(a->nargs ? a->nargs : 1));
      return match_call(R, a, &k, slot, false);
    }
    }
    return true;
  }
}

/* Lean's own types, and those the skipped commands of the program declare. */
static bool is_type_name(const Program *prog, const char *name) {
  static const char *const lean_types[] = {"Nat", "Int", "Float", "List", "Type", "Prop", "Bool", NULL};
  for (int k = 0; lean_types[k]; k++)
    if (!strcmp(name, lean_types[k])) return true;
  for (int k = 0; k < prog->ntype_names; k++)
    if (!strcmp(name, prog->type_names[k])) return true;
  return false;
}

/* Is the body of a declaration a type: a type name, applied or not? */
static bool is_type_body(Resolver *R, const Ast *a, Env *env) {
  while (a->kind == AST_PAREN) a = a->a;
  if (a->kind == AST_APP) a = a->a;
  if (a->kind != AST_VAR) return false;
  Name n = name_resolve(R->prog, a->name, env, R->scope);
  switch (n.kind) {
  case NAME_DECL: return n.decl->is_type;
  case NAME_NONE: return is_type_name(R->prog, a->name);
  case NAME_LOCAL:
  case NAME_BUILTIN: return false;
  }
  return false;
}

static void resolve_decl(Resolver *R, Decl *d) {
  Env *env = resolve_binders(R, d->params, d->nparams, NULL);
  if (d->ret) resolve_type(R, d->ret, env);
  if (!d->ret && is_type_body(R, d->body, env)) {
    d->is_type = true;
    return;
  }
  resolve_expr(R, d->body, env);
  d->returns_value = d->ret ? d->ret->kind != TY_ARROW : !may_be_fun(R, d->body, env);
}

void resolve_program(Ctx *c, Program *prog) {
  Resolver R = {c, prog, 0};
  for (int i = 0; i < prog->ndecls; i++) {
    R.scope = i;
    resolve_decl(&R, prog->decls[i]);
  }
}
