/*
 * value.h: the values of elaboration, shared by elab.c and builtins.c, and
 * the rules for names and calls that resolve.c states once for elab.c too
 * (not part of the front end's interface).
 */
#ifndef TS_VALUE_H
#define TS_VALUE_H

#include <string.h>

#include "front.h"

typedef enum { V_INT, V_FLOAT, V_TENSOR, V_LIST, V_FUN } VKind;
typedef struct Value Value;
typedef struct Elab Elab;
typedef struct Builtin Builtin;
typedef struct Env Env;

typedef enum { FN_DECL, FN_LAMBDA, FN_BUILTIN } FnKind;


/* A chain of local names (binders, `let`s, `fun` parameters), innermost
   first.  Elaboration binds values; resolution (resolve.c) binds names only
   (val NULL). */
struct Env {
  const char *name;
  Value *val;        /* elaboration: NULL for an implicit parameter not inferred yet */
  Env *next;
};

static inline Env *env_find(Env *env, const char *name) {
  for (; env; env = env->next)
    if (strcmp(env->name, name) == 0) return env;
  return NULL;
}

struct Value {
  VKind kind;
  Pos pos;           /* the expression that produced it */
  /* V_INT */
  int64_t i;
  bool is_int;       /* Int (signed) rather than Nat */
  const char *sym;
  /* V_FLOAT */
  double f;
  /* V_TENSOR */
  Node *node;
  /* V_LIST */
  Value **items;
  int n;
  /* V_FUN */
  FnKind fk;
  const Decl *decl;
  int decl_index;    /* scope: declarations visible from the body */
  const Ast *lam;
  Env *env;          /* captured environment of a lambda */
  const Builtin *bi;
  Value **bound;     /* one per parameter; NULL while unbound */
  Pos *bound_pos;
};


/* A builtin is called like a declaration: named, positional and optional
   parameters; its fire function gets one value per parameter. */
#define BUILTIN_MAX_PARAMS 4
struct Builtin {
  const char *name;
  int nparams;
  Binder params[BUILTIN_MAX_PARAMS];     /* names only */
  bool has_default[BUILTIN_MAX_PARAMS];
  int64_t deflt[BUILTIN_MAX_PARAMS];
  Op op;                                 /* for the op families */
  /* args: one per parameter; argpos: where each was written (the call for
     a default) */
  Value *(*fire)(Elab *E, const Builtin *b, Value **args, const Pos *argpos, Pos call);
};

extern const Builtin builtins[];
extern const int builtin_count;
const Builtin *builtin_find(const char *name);
/* Is b the fold `layers` (whose result has the type of its init, so may be
   a function)? */
bool builtin_is_fold(const Builtin *b);

/* ---- names and calls (resolve.c), shared by resolution and elaboration ---- */

/* What a name denotes where it is used: a local, a declaration before
   `scope` (the latest of that name), a builtin, or nothing.  A qualified
   name (Tilesmith.softmax) that denotes nothing is tried by its last
   component. */
typedef enum { NAME_NONE, NAME_LOCAL, NAME_DECL, NAME_BUILTIN } NameKind;
typedef struct Name {
  NameKind kind;
  Env *local;
  const Decl *decl;
  int index;         /* NAME_DECL: its position in the program */
  const Builtin *builtin;
} Name;
Name name_resolve(const Program *prog, const char *name, Env *env, int scope);
/* Error if `name` is `x.f` with x a local (Lean's projection notation). */
void name_check_projection(Ctx *c, Pos at, const char *name, Env *env);
/* The known name nearest to `name` (locals, declarations before `scope`,
   builtins), or NULL if none is close. */
const char *name_suggest(const Program *prog, const char *name, Env *env, int scope);
/* An --entry that names no definition: the user's definition nearest to it
   (not the prelude's), else the list of them. */
TS_NORETURN void entry_unknown(Ctx *c, const Program *prog, const char *name);
/* Report a name that denotes nothing: defined only later, or unknown (with
   the nearest known name). */
TS_NORETURN void name_unknown(Ctx *c, const Program *prog, Pos at, const char *name, Env *env, int scope);
/* Report a shape variable (`Tensor s`) that is not a binder in scope. */
TS_NORETURN void name_unknown_shape(Ctx *c, Pos at, const char *var, Env *env);

/* A function as a call sees it: a declaration, a builtin or a `fun`,
   possibly with some parameters already given. */
typedef struct Callee {
  const char *name;          /* "fun" for a lambda */
  const Binder *params;
  int nparams;
  const bool *has_default;   /* a builtin's optional parameters (else Binder.deflt) */
  Value *const *bound;       /* parameters already given, or NULL: none */
  bool returns_fun;          /* once its explicit parameters are given, the
                                result may be a function (unknown counts) */
} Callee;
Callee callee_decl(const Decl *d);
Callee callee_builtin(const Builtin *b);
Callee callee_lambda(const Ast *fun);
/* How many explicit parameters are still to give: *least (the required
   ones) to *most (with the optional ones). */
void callee_arity(const Callee *k, int *least, int *most);
/* The names of those parameters, "x, dim". */
const char *callee_param_names(Arena *a, const Callee *k);
/* The index of the parameter called `name`, or an error at `at` suggesting
   the nearest one. */
int callee_param(Ctx *c, Pos at, const Callee *k, const char *name);
TS_NORETURN void callee_given_twice(Ctx *c, Pos at, const Callee *k, const char *name);
/* A positional argument with no parameter left; `result` describes what the
   callee returned (NULL: known not to be a function). */
TS_NORETURN void callee_too_many(Ctx *c, Pos at, const Callee *k, const char *result);
/* `layers n init f` calls f with the layer index and the carried value:
   error at `at` (the function) unless k can take exactly those two. */
void layers_check_step(Ctx *c, Pos at, const Callee *k);

/* helpers exported by elab.c for the builtins */
Value *val_int(Elab *E, int64_t i, const char *sym, bool is_int, Pos p);
Value *val_float(Elab *E, double f, Pos p);
Value *val_tensor(Elab *E, Node *n, Pos p);
const char *value_kind_name(const Value *v);
Graph *elab_graph(Elab *E);
Ctx *elab_ctx(Elab *E);
/* A number or tensor as a node (an integer stays integer when want_int). */
Node *as_node(Elab *E, Value *v, bool want_int, const char *what, Pos p);
int64_t want_int(Elab *E, Value *v, const char *what);
/* The items of a list value, or an error naming `what`. */
Value **want_list(Elab *E, Value *v, const char *what, int *n);
/* A size with its symbolic form. */
const char *value_sym(const Value *v);
bool value_is_fun(const Value *v);
Value *do_unary(Elab *E, Op op, Value *a, Pos p);
Value *do_binary(Elab *E, Op op, const char *spelling, Value *a, Value *b, Pos p);
Value *elab_apply1(Elab *E, Value *fn, Value *a, Pos call);
Value *elab_apply2(Elab *E, Value *fn, Value *a, Value *b, Pos call);
/* A function value as a call sees it. */
Callee value_callee(const Value *f);

#endif
