/*
 * tuned.c: schedules measured on a GPU, remembered on disk.
 *
 * `tilesmith tune` writes, for an entry, the modules of the cost model's
 * best few schedules (both targets) and a manifest; tools/tune.py times
 * them on the GPU and appends the winner to a record file, one line per
 * record, tab-separated:
 *
 *   key  entry  target  schedule  measured_us  predicted_us  device  versions  date
 *
 * The key is a hash of the entry's graph (ops, shapes, attributes and
 * operands: no source positions, so editing comments keeps it), the storage
 * type and the cost model's GPU profile.  `opt`, `explain`, `tiles` and
 * `verify` given --tuned FILE (or TILESMITH_TUNED=FILE) apply the last
 * record of the key as if its schedule were given with --schedule, and
 * `opt --target best` takes its target.  The file is plain text, so a
 * machine without the GPU uses records made on one by copying it.
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include <sys/stat.h>

#include "cli.h"

uint64_t tune_key(const Graph *g, DType dt, const Gpu *gpu) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  uint64_t h = 0x74756e65ULL;
  if (!f) return h;
  graph_print_text(f, g);
  fclose(f);
  /* every line up to its source position (" @ ") */
  bool skip = false;
  for (size_t i = 0; i < len; i++) {
    if (text[i] == '\n') skip = false;
    else if (!skip && text[i] == ' ' && i + 2 < len && text[i + 1] == '@' && text[i + 2] == ' ') skip = true;
    if (!skip) h = hash_mix(h, (uint64_t)(unsigned char)text[i]);
  }
  free(text);
  h = hash_mix(h, (uint64_t)dt);
  for (const char *p = gpu->name; *p; p++) h = hash_mix(h, (uint64_t)(unsigned char)*p);
  return h;
}

/* field i (0-based) of a tab-separated line, copied into buf */
static bool field(const char *line, int i, char *buf, size_t n) {
  const char *p = line;
  for (int k = 0; k < i; k++) {
    p = strchr(p, '\t');
    if (!p) return false;
    p++;
  }
  size_t m = strcspn(p, "\t\r\n");
  if (m >= n) m = n - 1;
  memcpy(buf, p, m);
  buf[m] = 0;
  return true;
}

/* A record's line: its key (16 hex digits) and a tab first. */
static bool is_record_line(const char *line) { return strspn(line, "0123456789abcdef") == 16 && line[16] == '\t'; }

int tuned_lookup(const char *path, uint64_t key, TunedRec *out) {
  FILE *f = fopen(path, "r");
  if (!f) return errno == ENOENT ? 0 : -1;
  char line[2048], want[32];
  snprintf(want, sizeof want, "%016llx", (unsigned long long)key);
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || !is_record_line(line) || strncmp(line, want, 16)) continue;
    TunedRec r;
    memset(&r, 0, sizeof r);
    char us[64], pred[64];
    if (!field(line, 2, r.target, sizeof r.target) || !field(line, 3, r.schedule, sizeof r.schedule) ||
        !field(line, 4, us, sizeof us) || !field(line, 5, pred, sizeof pred) ||
        !field(line, 6, r.device, sizeof r.device) || !field(line, 7, r.versions, sizeof r.versions) ||
        !field(line, 8, r.date, sizeof r.date))
      continue; /* a malformed record: skipped */
    r.measured_us = strtod(us, NULL);
    r.predicted_us = strtod(pred, NULL);
    *out = r; /* the last record of the key wins */
    found = 1;
  }
  fclose(f);
  return found;
}

bool tuned_file_ok(const char *path, char *why, size_t len) {
  struct stat st;
  FILE *f = NULL;
  if (stat(path, &st) != 0 || (!S_ISDIR(st.st_mode) && !(f = fopen(path, "r")))) {
    snprintf(why, len, "--tuned %s: %s", path, strerror(errno));
    return false;
  }
  if (!f) {
    snprintf(why, len, "--tuned %s: a directory, not a file of records", path);
    return false;
  }
  char line[2048];
  int ln = 0;
  bool ok = true;
  while (ok && fgets(line, sizeof line, f)) {
    ln++;
    if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0) continue;
    ok = is_record_line(line);
    if (!ok)
      snprintf(why, len, "--tuned %s:%d: not a record of tuned schedules (KEY<TAB>ENTRY<TAB>..., as `tilesmith tune` and "
                         "tools/tune.py write them)", path, ln);
  }
  fclose(f);
  return ok;
}

const char *tuned_path(const Opts *o) {
  if (o->tuned) return o->tuned;
  const char *env = getenv("TILESMITH_TUNED");
  return env && *env ? env : NULL;
}
