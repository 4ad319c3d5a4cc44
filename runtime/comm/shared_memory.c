/* The shared-memory allreduce (docs/runtime.md, "Allreduce algorithms"): when every rank runs on
 * one machine, the ranks sum through an MPI-3 shared window instead of sending messages.
 *
 * Each rank's part of the window holds a line of flags, two staging areas and, if asked, the
 * pool the caller allreduces (the gradients). A span is summed in chunks: the owner of block b of
 * a chunk (the chunk cut into p near-equal blocks) adds block b of the other ranks' copies, in
 * rank order, into its own copy; after a barrier every rank copies each block from its owner.
 * Each element is summed once, by one rank, in one order, so all ranks hold bitwise the same
 * result.
 *
 * A span of the pool is summed in place: the ranks read each other's pools directly, so each
 * byte is read about twice and written once, with no message and no MPI call. Any other buffer
 * is staged: each chunk is first copied into the rank's staging area. Chunks alternate between
 * the two areas, so a rank overwrites an area only two chunks later, after a barrier every rank
 * passes only once it has finished reading that area. */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernels.h"
#include "../util.h"
#include "comm.h"

/* Staged chunks of 256 Ki floats (1 MiB) per rank: bench/allreduce at 2 ranks measured 64 Ki
 * 10-25% slower from 1 MiB on (twice the barriers), 1 Mi slower again (out of the L2 cache). */
enum { STAGE = 262144, LINE = 64 };

typedef struct SwnShared {
  MPI_Win win;
  char **base;                    /* base[r]: rank r's part of the window */
  atomic_uint_fast64_t **arrived; /* arrived[r]: barriers rank r has reached */
  uint64_t barriers;              /* this rank's count (all ranks make the same calls) */
  uint64_t chunks;                /* staged chunks so far: the next uses area chunks & 1 */
  float **chunk_copies;           /* each rank's copy of the chunk being summed */
  float *pool;                    /* this rank's pool */
  int64_t pool_words;
} SwnShared;

static size_t pool_at(void) { return LINE + 2 * sizeof(float) * STAGE; }

static float *area(const SwnShared *s, int rank, int which) {
  return (float *)(s->base[rank] + LINE) + (int64_t)which * STAGE;
}

/* Whether every rank of `comm` shares this machine's memory. Collective. */
static bool one_machine(MPI_Comm comm, int size) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  return node_size == size;
}

void swn_shared_open(SwnComm *c, int64_t pool_words) {
  if (c->size < 2 || !one_machine(c->comm, c->size)) return;
  SwnShared *s = swn_alloc(sizeof *s);
  size_t bytes = pool_at() + sizeof(float) * (size_t)pool_words;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each rank's part on its own pages */
  char *mine;
  int err = MPI_Win_allocate_shared((MPI_Aint)bytes, LINE, info, c->comm, &mine, &s->win);
  MPI_Info_free(&info);
  if (err != MPI_SUCCESS)
    swn_fatal("cannot allocate the allreduce's shared window (%zu bytes a rank)", bytes);
  memset(mine, 0, bytes);
  s->base = swn_alloc(sizeof(char *) * (size_t)c->size);
  s->arrived = swn_alloc(sizeof *s->arrived * (size_t)c->size);
  s->chunk_copies = swn_alloc(sizeof(float *) * (size_t)c->size);
  for (int r = 0; r < c->size; r++) {
    MPI_Aint size;
    int unit;
    MPI_Win_shared_query(s->win, r, &size, &unit, &s->base[r]);
    s->arrived[r] = (atomic_uint_fast64_t *)s->base[r];
  }
  atomic_init(s->arrived[c->rank], 0);
  s->pool = pool_words > 0 ? (float *)(mine + pool_at()) : NULL;
  s->pool_words = pool_words;
  MPI_Barrier(c->comm); /* every flag is initialised before anyone reads it */
  c->shared = s;
}

float *swn_shared_pool(const SwnComm *c) { return c->shared ? c->shared->pool : NULL; }

void swn_shared_close(SwnComm *c) {
  SwnShared *s = c->shared;
  if (!s) return;
  MPI_Win_free(&s->win);
  free(s->base), free(s->arrived), free(s->chunk_copies), free(s);
  c->shared = NULL;
}

/* Waits for the others: spins briefly, then yields the core (more ranks than cores), and beside
 * compute threads (c->yield) sleeps between polls as the message executor does. */
static void barrier(SwnComm *c) {
  SwnShared *s = c->shared;
  uint64_t target = ++s->barriers;
  atomic_store_explicit(s->arrived[c->rank], target, memory_order_release);
  for (int r = 0; r < c->size; r++)
    for (int polls = 0; atomic_load_explicit(s->arrived[r], memory_order_acquire) < target;
         polls++) {
      if (polls < 64) continue;
      if (c->yield && polls >= 256)
        nanosleep(&(struct timespec){0, 20000}, NULL);
      else
        sched_yield();
    }
}

/* Block `b` of a chunk of n floats. */
static void block(const SwnComm *c, int64_t n, int b, int64_t *at, int64_t *m) {
  swn_block(n, c->size, b, at, m);
}

/* This rank's block of the chunk copies[r][0..n): the other ranks' blocks added into its own
 * copy, in rank order, a vectorised pass each (swk_sum_into). Whole passes stream the peers'
 * memory far better than 1 KiB tiles did: bench/allreduce's 1 MiB on 2 ranks went from 169-228
 * to 108-130 us (README.md, "Allreduce"). */
static void sum_own_block(const SwnComm *c, float *const *copies, int64_t n) {
  int64_t at, m;
  block(c, n, c->rank, &at, &m);
  for (int k = 0; k < c->size; k++)
    if (k != c->rank) swk_sum_into(m, copies[c->rank] + at, copies[k] + at);
}

/* The chunk's blocks, each from its owner's copy, into `out` (this rank's own too, unless `out`
 * is its copy). */
static void gather_blocks(const SwnComm *c, float *const *copies, int64_t n, float *out) {
  for (int r = 0; r < c->size; r++) {
    int64_t at, m;
    block(c, n, r, &at, &m);
    if (out != copies[r]) memcpy(out + at, copies[r] + at, sizeof(float) * (size_t)m);
  }
}

/* A span of the pool, [offset, offset + count), in place. Chunk k+1's sums start before chunk k
 * is gathered: the barrier between them is the only one a chunk needs. The last barrier keeps a
 * rank from changing its pool while others still read it. */
static void pool_allreduce(SwnComm *c, int64_t offset, int64_t count) {
  SwnShared *s = c->shared;
  float **copies = s->chunk_copies;
  barrier(c); /* every rank's span is complete */
  for (int64_t at = 0; at < count; at += STAGE) {
    int64_t n = count - at < STAGE ? count - at : STAGE;
    for (int r = 0; r < c->size; r++) copies[r] = (float *)(s->base[r] + pool_at()) + offset + at;
    sum_own_block(c, copies, n);
    barrier(c);
    gather_blocks(c, copies, n, copies[c->rank]);
  }
  barrier(c);
}

/* Any buffer: each chunk is staged in the rank's area, summed there, gathered into the buffer. */
static void staged_allreduce(SwnComm *c, float *buf, int64_t count) {
  SwnShared *s = c->shared;
  float **copies = s->chunk_copies;
  for (int64_t at = 0; at < count; at += STAGE) {
    int64_t n = count - at < STAGE ? count - at : STAGE;
    int which = (int)(s->chunks++ & 1);
    for (int r = 0; r < c->size; r++) copies[r] = area(s, r, which);
    memcpy(copies[c->rank], buf + at, sizeof(float) * (size_t)n);
    barrier(c);
    sum_own_block(c, copies, n);
    barrier(c);
    gather_blocks(c, copies, n, buf + at);
  }
}

void swn_shared_allreduce(SwnComm *c, float *buf, int64_t count) {
  SwnShared *s = c->shared;
  if (!s) swn_fatal("internal: the shared-memory allreduce needs every rank on one machine");
  if (s->pool && buf >= s->pool && buf + count <= s->pool + s->pool_words)
    pool_allreduce(c, buf - s->pool, count);
  else
    staged_allreduce(c, buf, count);
}
