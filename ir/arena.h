/* Arena allocation: every IR object of a module lives in one arena and dies with it,
 * so no pass has to track ownership and nothing can leak. */
#ifndef SWNC_ARENA_H
#define SWNC_ARENA_H

#include <stddef.h>
#include <string.h>

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
  ArenaChunk *head;
  size_t bytes; /* total allocated, for --stats and tests */
} Arena;

/* The compiler's one out-of-memory policy: "swnc: error: out of memory (allocating <what>)"
 * on stderr and exit status 2. Everything the compiler allocates goes through the arena or
 * these. */
_Noreturn void swnc_out_of_memory(const char *what);
void *xmalloc(size_t size, const char *what);
void *xcalloc(size_t count, size_t size, const char *what);
void *xrealloc(void *p, size_t size, const char *what);

void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

/* Growable arrays backed by an arena: `VEC(T) v` is {T *data; int len, cap;}.
 * Growth copies into a new arena block; the old one is reclaimed with the arena. */
#define VEC(T)                                                                                     \
  struct {                                                                                         \
    T *data;                                                                                       \
    int len, cap;                                                                                  \
  }
void *vec_grow(Arena *a, void *data, int len, int *cap, size_t elem);
#define vec_push(a, v, x)                                                                          \
  do {                                                                                             \
    if ((v).len == (v).cap)                                                                        \
      (v).data = vec_grow((a), (v).data, (v).len, &(v).cap, sizeof *(v).data);                     \
    (v).data[(v).len++] = (x);                                                                     \
  } while (0)

#endif
