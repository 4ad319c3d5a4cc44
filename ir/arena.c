#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct ArenaChunk {
  ArenaChunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
};

enum { CHUNK_MIN = 64 * 1024 };

void swnc_out_of_memory(const char *what) {
  fprintf(stderr, "swnc: error: out of memory (allocating %s)\n", what);
  exit(2);
}

void *xmalloc(size_t size, const char *what) {
  void *p = malloc(size ? size : 1);
  if (!p) swnc_out_of_memory(what);
  return p;
}

void *xcalloc(size_t count, size_t size, const char *what) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) swnc_out_of_memory(what);
  return p;
}

void *xrealloc(void *p, size_t size, const char *what) {
  void *q = realloc(p, size ? size : 1);
  if (!q) swnc_out_of_memory(what);
  return q;
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  ArenaChunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t cap = size > CHUNK_MIN ? size : CHUNK_MIN;
    c = xmalloc(sizeof *c + cap, "the IR");
    c->used = 0;
    c->size = cap;
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += size;
  a->bytes += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void *vec_grow(Arena *a, void *data, int len, int *cap, size_t elem) {
  int ncap = *cap ? *cap * 2 : 8;
  void *p = arena_alloc(a, (size_t)ncap * elem);
  if (len) memcpy(p, data, (size_t)len * elem);
  *cap = ncap;
  return p;
}

void arena_free(Arena *a) {
  ArenaChunk *c = a->head;
  while (c) {
    ArenaChunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
  a->bytes = 0;
}
