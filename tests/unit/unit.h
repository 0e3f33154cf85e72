/* unit.h: a tiny test framework.  `TEST(name) { CHECK(x); }` registers a test
   (through a constructor); tests/unit/main.c runs them all and prints
   "N passed, M failed".  CHECK records a failure and goes on; REQUIRE returns. */
#ifndef TS_UNIT_H
#define TS_UNIT_H
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef void (*unit_fn)(void);
void unit_register(const char *name, const char *file, unit_fn fn);
void unit_fail(const char *file, int line, const char *expr);

#define TEST(name)                                                             \
  static void test_##name(void);                                               \
  __attribute__((constructor)) static void reg_##name(void) {                  \
    unit_register(#name, __FILE__, test_##name);                               \
  }                                                                            \
  static void test_##name(void)

#define CHECK(x)                                                               \
  do {                                                                         \
    if (!(x)) unit_fail(__FILE__, __LINE__, #x);                               \
  } while (0)
#define REQUIRE(x)                                                             \
  do {                                                                         \
    if (!(x)) {                                                                \
      unit_fail(__FILE__, __LINE__, #x);                                       \
      return;                                                                  \
    }                                                                          \
  } while (0)
/* Opens a test that builds graphs in env e of type T (fields jb and a, set
   up by init): a build error that unwinds to e.jb fails the test and frees
   the arena. */
#define UNIT_GRAPH_ENV(T, init, e)                                             \
  T e;                                                                         \
  init(&e);                                                                    \
  if (setjmp(e.jb)) {                                                          \
    CHECK(!"graph building failed");                                           \
    arena_free(e.a);                                                           \
    return;                                                                    \
  }
#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))
#define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0)
#endif
