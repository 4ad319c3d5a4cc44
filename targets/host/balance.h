/* How the host kernels share work between threads: taken from a queue as threads finish, in
 * pieces that shrink as the work runs out (guided self-scheduling, Polychronopoulos and Kuck,
 * IEEE Trans. Computers 1987): each take is the remaining work over twice the threads, so the
 * first pieces are nearly as long as even shares (their neighbouring items share caches) and
 * the last are short. On a shared machine a core slowed by a neighbour's load then does less of
 * the work instead of holding the others at the join. Loops of independent items use OpenMP's
 * schedule(guided), much the same rule; loops over ranges (a direct convolution's runs of
 * strips) take pieces from a HostQueue. Only work whose result does not depend on which thread
 * does it is shared so: each output is written by one piece, its sums in a fixed order. */
#ifndef SWNC_HOST_BALANCE_H
#define SWNC_HOST_BALANCE_H

#include <stdbool.h>

/* Items [next, count) are left; shared by the team, read and advanced atomically. */
typedef struct HostQueue {
  long next, count;
} HostQueue;

/* The next piece for one of `threads` threads, at least `least` items (but the last): [*from,
 * *to); false when none is left. */
static inline bool host_take(HostQueue *q, int threads, long least, long *from, long *to) {
  long start = __atomic_load_n(&q->next, __ATOMIC_RELAXED), end;
  do {
    if (start >= q->count) return false;
    long take = (q->count - start) / (2L * threads);
    if (take < least) take = least;
    end = start + take < q->count ? start + take : q->count;
  } while (!__atomic_compare_exchange_n(&q->next, &start, end, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
  *from = start, *to = end;
  return true;
}

#endif
