/*
 * cli.h: what the command handlers share (main.c parses the options and
 * dispatches; each cmd_*.c file holds commands of its own).
 */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "../front/front.h"
#include "../interp/interp.h"
#include "../tile/tile.h"

enum { EXIT_OK = 0, EXIT_USER = 1, EXIT_USAGE = 2 };

typedef struct Opts {
  const char *file;
  const char *entry;
  SizeArg sizes[64];
  int nsizes;
  const char *format;
  struct { const char *name, *path; bool used; } ins[64];
  int nins;
  uint64_t seed;
  const char *out;
  bool stats;
  const char *dtype;      /* tiles, verify, opt */
  const char *target;     /* opt: tilelang or triton */
  int trials;             /* verify: random trials per instance (0 = default) */
} Opts;

/* One compilation: its arena, context and program. */
typedef struct Session {
  Arena *arena;
  Ctx ctx;
  jmp_buf jb;
  Program prog;
} Session;

void session_open(Session *s);
void session_close(Session *s);
/* Load the prelude and the file; false (diagnostic printed) on error. */
bool load(Session *s, const char *path);
/* Elaborate `entry` with o's sizes; NULL (diagnostic printed) on error. */
Graph *elaborate(Session *s, Opts *o, const char *entry);
/* A usage error (exit status 2), with the current command's usage line. */
int usage_error(const char *fmt, ...) TS_PRINTF(1, 2);

int cmd_verify(Opts *o);   /* cmd_verify.c */
int cmd_opt(Opts *o);      /* cmd_opt.c */

#endif
