/* The unit-test runner: runs every registered TEST and prints a summary line
   "N passed, M failed"; exit status 1 if any failed.  A name given on the
   command line runs only tests whose name contains it. */
#include <stdlib.h>
#include "unit.h"

#define MAX_TESTS 1024
static struct { const char *name, *file; unit_fn fn; } tests[MAX_TESTS];
static int ntests, cur_failed;

void unit_register(const char *name, const char *file, unit_fn fn) {
  if (ntests < MAX_TESTS) {
    tests[ntests].name = name;
    tests[ntests].file = file;
    tests[ntests].fn = fn;
    ntests++;
  }
}

void unit_fail(const char *file, int line, const char *expr) {
  fprintf(stderr, "  %s:%d: CHECK failed: %s\n", file, line, expr);
  cur_failed = 1;
}

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests; i++) {
    if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
    cur_failed = 0;
    tests[i].fn();
    if (cur_failed) {
      fprintf(stderr, "FAIL %s (%s)\n", tests[i].name, tests[i].file);
      failed++;
    } else {
      passed++;
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
