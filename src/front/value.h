/*
 * value.h: the values of elaboration, shared by elab.c and builtins.c (not
 * part of the front end's interface).
 */
#ifndef TS_VALUE_H
#define TS_VALUE_H

#include "front.h"

typedef enum { V_INT, V_FLOAT, V_TENSOR, V_LIST, V_FUN } VKind;
typedef struct Value Value;
typedef struct Elab Elab;
typedef struct Builtin Builtin;
typedef struct Env Env;

typedef enum { FN_DECL, FN_LAMBDA, FN_BUILTIN } FnKind;


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
  Value *(*fire)(Elab *E, const Builtin *b, Value **args, Pos call);
};

extern const Builtin builtins[];
extern const int builtin_count;
const Builtin *builtin_find(const char *name);

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
Value *elab_apply2(Elab *E, Value *fn, Value *a, Value *b, Pos call);

#endif
