/*
 * arena.c: the allocator of one compilation.
 *
 * Memory comes in chunks from malloc and is handed out by bumping a pointer;
 * nothing is freed until arena_free releases every chunk at once.  A request
 * larger than a quarter of the chunk size gets a chunk of its own, so big
 * tables do not waste the tail of the current chunk.  arena_realloc grows in
 * place when the block is the last one handed out.  arena_reset forgets
 * everything handed out but keeps the chunks, for the next allocations to
 * reuse: a scratch arena filled and emptied thousands of times (the search
 * prices each plan in one) then costs no fresh pages from the system.
 */
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define CHUNK (64 * 1024)

typedef struct Chunk {
  struct Chunk *next;
  size_t size, used;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  Chunk *spare;   /* chunks of CHUNK bytes kept by arena_reset, reused first */
  Chunk *spare_big; /* larger ones kept (a block of its own each) */
  size_t total;
};

Arena *arena_new(void) {
  Arena *a = calloc(1, sizeof *a);
  if (!a) abort();
  return a;
}

static void chunks_free(Chunk *c) {
  for (Chunk *n; c; c = n) {
    n = c->next;
    free(c);
  }
}

void arena_free(Arena *a) {
  if (!a) return;
  chunks_free(a->head);
  chunks_free(a->spare);
  chunks_free(a->spare_big);
  free(a);
}

void arena_reset(Arena *a) {
  for (Chunk *c = a->head, *n; c; c = n) {
    n = c->next;
    Chunk **to = c->size == CHUNK ? &a->spare : &a->spare_big;
    c->next = *to;
    *to = c;
  }
  a->head = NULL;
}

static Chunk *chunk_new(Arena *a, size_t size) {
  /* a kept chunk: one of CHUNK bytes when no more is asked, else the
     first larger one large enough (big blocks are few); the rest of a
     larger one than asked stays unused */
  Chunk **p = size <= CHUNK ? &a->spare : &a->spare_big;
  while (*p && (*p)->size < size) p = &(*p)->next;
  if (*p) {
    Chunk *c = *p;
    *p = c->next;
    c->used = 0;
    return c;
  }
  Chunk *c = malloc(sizeof *c + size);
  if (!c) {
    fprintf(stderr, "tilesmith: out of memory (%zu bytes)\n", size);
    abort();
  }
  c->size = size;
  c->used = 0;
  a->total += size;
  return c;
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  Chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    if (size > CHUNK / 4) {
      /* a chunk of its own, linked behind the current one */
      Chunk *big = chunk_new(a, size > CHUNK ? size : CHUNK); /* (every chunk CHUNK bytes or more: reusable) */
      if (c) {
        big->next = c->next;
        c->next = big;
      } else {
        big->next = NULL;
        a->head = big;
      }
      big->used = size;
      memset(big->data, 0, size);
      return big->data;
    }
    c = chunk_new(a, CHUNK);
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  memset(p, 0, size);
  return p;
}

void *arena_realloc(Arena *a, void *p, size_t old, size_t size) {
  if (size <= old) return p;
  Chunk *c = a->head;
  size_t o16 = (old + 15) & ~(size_t)15, n16 = (size + 15) & ~(size_t)15;
  if (p && c && (unsigned char *)p + o16 == c->data + c->used &&
      c->size - c->used >= n16 - o16) {
    memset(c->data + c->used, 0, n16 - o16);
    c->used += n16 - o16;
    return p;
  }
  void *q = arena_alloc(a, size);
  if (p && old) memcpy(q, p, old);
  return q;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  /* formatted once into a buffer on the stack when it fits (the names
     of tiles and globals, made by the thousand while the search prices) */
  char buf[256];
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
  if (n >= (int)sizeof buf) vsnprintf(p, (size_t)n + 1, fmt, ap2);
  else if (n > 0) memcpy(p, buf, (size_t)n + 1);
  va_end(ap2);
  return p;
}

const char *str_intern(Arena *a, const char *s, size_t n) { return arena_strndup(a, s, n); }

size_t arena_bytes(const Arena *a) { return a->total; }
