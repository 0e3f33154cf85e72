/*
 * front.h: the front end, from `.lean` text to a graph.
 *
 * lex.c turns a file into tokens (UTF-8 aware: `⬝ ᵀ ≤ ≥ ≠ → λ`, subscript
 * digits in names, nested block comments).  parse.c is a recursive-descent
 * parser with the grammar rule above each function; it builds the AST below,
 * every node keeping the token it came from.  resolve.c checks, for every
 * definition as soon as the file is loaded, that each name denotes
 * something and that calls whose arity is known take no more arguments
 * than they can, as Lean does when a definition is written.  elab.c evaluates a chosen
 * entry definition symbolically: definitions (the prelude's and the user's)
 * are inlined, `Nat` arithmetic is done at compile time, and every tensor
 * operation becomes a node of the graph IR, whose builder checks shapes.
 *
 * Layout: like Lean, a term continues across lines only while the next line
 * is indented past the column of the enclosing `let` or declaration.  The
 * lexer records the column of each token and whether it starts a line; the
 * parser does the rest.
 */
#ifndef TS_FRONT_H
#define TS_FRONT_H

#include "../util/util.h"
#include "../ir/ir.h"

/* ---- tokens ---- */
typedef enum {
  TK_IDENT,    /* names, Unicode letters allowed: W₁, α, x' */
  TK_KEYWORD,  /* def let fun λ import open namespace end ... (see lex.c) */
  TK_NAT,      /* 4096 */
  TK_FLOAT,    /* 0.5 1e-6 */
  TK_STR,      /* "..." (only for set_option and the like) */
  TK_PUNCT,    /* operators and brackets, spelled in .text (ASCII spelling) */
  TK_DOC,      /* a doc comment /-- ... -/ (kept for the next declaration) */
  TK_EOF,
} TokKind;

typedef struct Token {
  TokKind kind;
  Pos pos;
  const char *text;     /* identifier / keyword / normalised punctuator:
                           "⬝" stays "⬝", "->" becomes "→", "<=" becomes "≤",
                           ">=" "≥", "!=" "≠", "fun"/"λ" both "fun" */
  int64_t nat;          /* TK_NAT value */
  double fnum;          /* TK_FLOAT value */
  bool bol;             /* first token on its line */
  bool space_before;    /* white space or a comment precedes it */
} Token;

typedef struct TokenList { Token *data; int len, cap; } TokenList;

/* Tokenize a whole file; errors unwind through c. */
TokenList lex_file(Ctx *c, const SrcFile *f);

/* ---- AST ---- */
typedef struct Ast Ast;
typedef struct TypeAst TypeAst;

typedef enum {
  TY_NAT,      /* Nat */
  TY_INT,      /* Int */
  TY_FLOAT,    /* Float */
  TY_TENSOR,   /* Tensor [d0, d1, ...]  or  Tensor s */
  TY_PARAM,    /* Param [...] */
  TY_INDEX,    /* Index [...] */
  TY_SHAPE,    /* List Nat, or Shape */
  TY_LIST,     /* List T (T not Nat) */
  TY_ARROW,    /* T → U */
} TypeKind;

struct TypeAst {
  TypeKind kind;
  Pos pos;
  Ast **dims; int ndims;   /* TY_TENSOR/PARAM/INDEX with a list of dimensions */
  const char *shapevar;    /* TY_TENSOR/PARAM/INDEX with a shape variable */
  Pos shapevar_pos;
  TypeAst *elem;           /* TY_LIST */
  TypeAst *from, *to;      /* TY_ARROW */
};

typedef struct Binder {
  const char *name;
  Pos pos;
  TypeAst *type;           /* NULL when not written (fun x => ...) */
  Ast *deflt;              /* (eps : Float := 1e-6) */
  bool implicit;           /* {B : Nat} */
} Binder;

typedef enum {
  AST_NAT,     /* 4096 */
  AST_FLOAT,   /* 0.5 */
  AST_STR,     /* "bf16" */
  AST_VAR,     /* a name */
  AST_APP,     /* f a b (dim := 1) */
  AST_BINOP,   /* a + b; op is the punctuator text: + - * / ^ ⬝ < ≤ > ≥ == ≠ */
  AST_NEG,     /* -a */
  AST_TRANSPOSE, /* aᵀ */
  AST_INDEX,   /* W[l] (no space before '[') */
  AST_LIST,    /* [a, b, c] */
  AST_LET,     /* let x := e; body */
  AST_FUN,     /* fun x y => e */
  AST_PAREN,   /* (e): kept so errors can point at the whole group */
} AstKind;

struct Ast {
  AstKind kind;
  Pos pos;                 /* the token that names the node: the operator of a
                              binop, the function of an application, ... */
  int64_t nat;             /* AST_NAT */
  double fnum;             /* AST_FLOAT */
  const char *name;        /* AST_VAR, AST_LET (bound name), AST_STR (text),
                              AST_BINOP (operator) */
  Ast *a, *b;              /* APP: a=function; BINOP: a,b; NEG/TRANSPOSE/PAREN: a;
                              INDEX: a[b]; LET: a=value, b=body; FUN: a=body */
  TypeAst *type;           /* LET with a type: let x : T := e */
  Ast **args; int nargs;   /* APP arguments, LIST items */
  const char **argnames;   /* APP: name for (name := e) arguments, else NULL */
  Binder *params; int nparams; /* FUN */
  bool returns_value;      /* FUN: resolve.c found its body is never a function */
};

typedef struct Decl {
  const char *name;
  Pos pos;                 /* the name's token */
  const char *doc;         /* doc comment text, or NULL */
  Binder *params; int nparams;
  TypeAst *ret;            /* NULL if not written */
  Ast *body;
  const SrcFile *file;
  bool returns_value;      /* resolve.c found its result is never a function */
  bool is_type;            /* resolve.c found its body is a type (abbrev Shape := List Nat):
                              Lean's business, never evaluated, its body not resolved */
} Decl;

typedef struct Program {
  Decl **decls; int ndecls;
  /* names of the types that skipped commands declare (structure, inductive,
     class): a declaration whose body is one of them is a type */
  const char **type_names; int ntype_names;
  /* name index (built by program_index): chains of declaration indices,
     latest first, so a lookup by name is one hash and a short walk */
  int *chain_head, *chain_next;
  int nbuckets;
} Program;

/* Parse one file; declarations are appended to prog (the prelude first, then
   the user's file, so names resolve as in Lean: earlier declarations only).
   Declarations the compiler does not evaluate (theorem, example, opaque,
   axiom, class, instance, structure, notation, infixl, ...) are skipped up to
   the next command that starts a line at column 1. */
void parse_file(Ctx *c, const SrcFile *f, Program *prog);

/* Return the declaration named `name` (the last one if redefined), or NULL. */
Decl *program_find(const Program *prog, const char *name);

/* Build the name index of prog (front_load does this after parsing). */
void program_index(Ctx *c, Program *prog);
/* The latest declaration named `name` among the first `limit`, or NULL;
   *index receives its position. */
const Decl *program_lookup(const Program *prog, const char *name, int limit, int *index);

/* ---- resolution ---- */
/* Check the names and static arities of every declaration (resolve.c);
   errors unwind through c.  front_load does this after parsing. */
void resolve_program(Ctx *c, Program *prog);

/* ---- elaboration ---- */

/* Elaborate `entry` into a graph.  Nat parameters of the entry that remain
   unbound are taken from sizes (by name); Tensor, Param and Index parameters
   become graph inputs, in declaration order. */
Graph *elab_entry(Ctx *c, const Program *prog, const char *entry, Pos entry_pos,
                  SizeArg *sizes, int nsizes);

/* The entry's Nat (and Int) parameters, for verify: name and value (-1
   where --size must give it: a generic entry's), at most max of them, in
   parameter order; returns how many.  Errors unwind through c. */
int elab_entry_nats(Ctx *c, const Program *prog, const char *entry, SizeArg *out, int max);

/* Describe the entry for `tilesmith check`: prints its signature with
   concrete shapes to out. */
void elab_print_signature(FILE *out, const Graph *g, const char *entry);

/* The embedded prelude (lean/Tilesmith.lean), generated at build time. */
extern const char ts_prelude_text[];
extern const size_t ts_prelude_len;

/* Load the prelude and (optionally) a user file into prog, index it and
   resolve every declaration's names. */
void front_load(Ctx *c, Program *prog, const SrcFile *user);

#endif
