/* The allreduce library's front: groups, algorithm choice, and the call itself. */
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "../kernels.h"
#include "../util.h"
#include "comm.h"
#include "half.h"

/* Segments of 1 MiB, 2 received ahead: bench/allreduce on 2 and 4 ranks here (128 KiB segments
 * lost 10-20% at 1-4 MiB to per-message costs; more ahead gained nothing). */
enum { DEFAULT_CHAIN = 8, SEGMENT_FLOATS = 262144, WINDOW = 2 };

/* Group ids 0..n-1 from each rank's "colour" (the lowest rank of its node, or r / size). */
static int number_groups(int size, const int *colour, int *group) {
  int n = 0;
  for (int r = 0; r < size; r++) {
    int g = -1;
    for (int s = 0; s < r && g < 0; s++)
      if (colour[s] == colour[r]) g = group[s];
    group[r] = g >= 0 ? g : n++;
  }
  return n;
}

static int node_colour(MPI_Comm comm, int rank) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int lowest = rank;
  MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  return lowest;
}

void swn_comm_open(SwnComm *c, MPI_Comm comm, SwnAllreduceAlgorithm algorithm, int group_size,
                   int chain, int64_t pool_words) {
  *c = (SwnComm){.algorithm = algorithm, .segment = SEGMENT_FLOATS, .window = WINDOW};
  MPI_Comm_dup(comm, &c->comm);
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  int colour = group_size > 0 ? c->rank / group_size : node_colour(c->comm, c->rank);
  int *colours = swn_alloc(sizeof(int) * (size_t)c->size);
  c->group = swn_alloc(sizeof(int) * (size_t)c->size);
  MPI_Allgather(&colour, 1, MPI_INT, colours, 1, MPI_INT, c->comm);
  int ngroups = number_groups(c->size, colours, c->group);
  free(colours);
  c->topo = (SwnTopology){.size = c->size,
                          .group = c->group,
                          .ngroups = ngroups,
                          .map = SWN_MAP_ROUND_ROBIN,
                          .chain = chain > 0 ? chain : DEFAULT_CHAIN,
                          .chunk = SWN_CHAIN_CHUNK_FLOATS};
  c->scratch = swn_alloc(sizeof(float) * (size_t)(c->segment * c->window));
  swn_shared_open(c, pool_words);
  const char *slow = getenv("SWNC_TEST_LINK_NS_PER_BYTE");
  c->test_link_ns_per_byte = slow ? atof(slow) : 0;
}

/* A test-only slow link: each call also takes this long, as on a network of that speed
 * (tests/runtime/distributed_test.sh checks that overlap hides it). */
static void slow_link(const SwnComm *c, int64_t count) {
  long long ns = (long long)(c->test_link_ns_per_byte * 4 * (double)count);
  if (ns > 0) nanosleep(&(struct timespec){ns / 1000000000, ns % 1000000000}, NULL);
}

void swn_comm_set_segments(SwnComm *c, int64_t segment, int window) {
  c->segment = segment > 0 ? segment : SEGMENT_FLOATS;
  c->window = window > 0 ? window : WINDOW;
  free(c->scratch);
  c->scratch = swn_alloc(sizeof(float) * (size_t)(c->segment * c->window));
}

void swn_comm_set_hier_upper(SwnComm *c, SwnUpperLevel upper) {
  c->topo.upper = upper;
  c->scheduled_count = 0; /* the cached schedule is another one now */
}

void swn_comm_close(SwnComm *c) {
  swn_shared_close(c);
  if (c->half) MPI_Op_free(&c->half_sum);
  free(c->halves);
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c->group), free(c->scratch), free(c->costs);
  swn_schedule_free(&c->schedule);
  swn_requests_free(c->requests);
  *c = (SwnComm){.comm = MPI_COMM_NULL};
}

SwnAllreduceAlgorithm swn_allreduce_choice(const SwnComm *c, int64_t count) {
  if (c->algorithm != SWN_ALLREDUCE_AUTO) return c->algorithm;
  if (!c->costs) return SWN_ALLREDUCE_MPI; /* nothing measured: the baseline */
  return swn_cost_choice(c->costs, (double)count * (c->half ? 2 : 4), c->half || !c->shared);
}

void swn_comm_set_costs(SwnComm *c, const SwnCostTable *t) {
  if (!c->costs) c->costs = swn_alloc(sizeof *c->costs);
  *c->costs = *t;
}

void swn_comm_set_half(SwnComm *c, bool half) {
  if (half == c->half) return;
  if (half)
    c->half_sum = swn_half_sum_op();
  else
    MPI_Op_free(&c->half_sum);
  c->half = half;
}

static void mpi_allreduce(SwnComm *c, float *buf, int64_t count) {
  c->bytes_sent += 2 * (c->size - 1) * count * (c->half ? 2 : 4) / c->size;
  uint16_t *h = NULL;
  if (c->half) {
    if (count > c->halves_cap) {
      free(c->halves);
      c->halves = swn_alloc(sizeof(uint16_t) * (size_t)(c->halves_cap = count));
    }
    swn_halves_of(count, buf, h = c->halves);
  }
  for (int64_t at = 0; at < count; at += 1 << 30) { /* MPI counts are int */
    int n = (int)(count - at < (1 << 30) ? count - at : 1 << 30);
    int err = h ? MPI_Allreduce(MPI_IN_PLACE, h + at, n, MPI_UINT16_T, c->half_sum, c->comm)
                : MPI_Allreduce(MPI_IN_PLACE, buf + at, n, MPI_FLOAT, MPI_SUM, c->comm);
    if (err != MPI_SUCCESS) swn_fatal("MPI_Allreduce failed");
  }
  if (h) swn_floats_of(count, h, buf);
}

/* Runs the schedule of (kind, algorithm, count), built again only when one of them changed
 * (rooted collectives have one design: their algorithm is not part of the key). */
static void execute_cached(SwnComm *c, SwnCollective kind, SwnAllreduceAlgorithm algorithm,
                           float *buf, int64_t count) {
  bool rooted = kind != SWN_COLLECTIVE_ALLREDUCE;
  if (kind != c->scheduled_kind || count != c->scheduled_count ||
      (!rooted && algorithm != c->scheduled)) {
    if (rooted)
      swn_schedule_rooted(kind, &c->topo, c->rank, count, &c->schedule);
    else
      swn_schedule_build(algorithm, &c->topo, c->rank, count, &c->schedule);
    c->scheduled_kind = kind, c->scheduled = algorithm, c->scheduled_count = count;
  }
  swn_execute_schedule(c, &c->schedule, buf);
}

static void run(SwnComm *c, float *buf, int64_t count, SwnAllreduceAlgorithm algorithm) {
  if (algorithm == SWN_ALLREDUCE_MPI) {
    mpi_allreduce(c, buf, count);
  } else if (algorithm == SWN_ALLREDUCE_SHM) {
    swn_shared_allreduce(c, buf, count);
  } else {
    execute_cached(c, SWN_COLLECTIVE_ALLREDUCE, algorithm, buf, count);
  }
}

/* The power of two that brings the largest sum of `ranks` values of magnitude up to `top` to at
 * most 2^15, below half's largest finite 65504 with room for the roundings of partial sums. */
static float half_scale(float top, int ranks) {
  if (!(top > 0) || !isfinite(top)) return 1;
  int e;
  frexpf(top * (float)ranks, &e); /* top x ranks < 2^e */
  e = 15 - e;
  return ldexpf(1, e < -126 ? -126 : e > 126 ? 126 : e);
}

/* fp16: scaled into half's range by a power of two common to all ranks (exact), sent as halves,
 * and rounded to half on every rank at the end: the rank that summed an element holds it in
 * float, the others the half it sent them, so rounding makes them bitwise equal. */
static void half_allreduce(SwnComm *c, float *buf, int64_t count, SwnAllreduceAlgorithm a) {
  float top = 0;
  for (int64_t i = 0; i < count; i++) top = fabsf(buf[i]) > top ? fabsf(buf[i]) : top;
  if (MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_FLOAT, MPI_MAX, c->comm) != MPI_SUCCESS)
    swn_fatal("MPI_Allreduce failed");
  float scale = half_scale(top, c->size);
  if (scale != 1) swk_scale(count, buf, scale);
  run(c, buf, count, a);
  swn_round_to_half(count, buf, 1 / scale);
}

void swn_allreduce(SwnComm *c, float *buf, int64_t count, SwnAllreduceAlgorithm algorithm) {
  if (c->size <= 1 || count <= 0) return;
  slow_link(c, count);
  if (algorithm == SWN_ALLREDUCE_AUTO) algorithm = swn_allreduce_choice(c, count);
  if (c->half && algorithm == SWN_ALLREDUCE_SHM)
    swn_fatal("internal: the shm allreduce sends no messages to compress");
  if (c->half)
    half_allreduce(c, buf, count, algorithm);
  else
    run(c, buf, count, algorithm);
}

/* Children of position i in a binomial tree of n: what it sends in a broadcast. */
static int binomial_children(int i, int n) {
  int k = 0;
  for (int d = 1; d < n; d *= 2) k += i % (2 * d) == 0 && i + d < n;
  return k;
}

static void mpi_rooted(SwnComm *c, SwnCollective kind, float *buf, int64_t count) {
  bool root = c->rank == 0, reduce = kind == SWN_COLLECTIVE_REDUCE;
  /* counted as a binomial tree sends: MPI's own choice is not visible */
  c->bytes_sent += 4 * count * (reduce ? !root : binomial_children(c->rank, c->size));
  for (int64_t at = 0; at < count; at += 1 << 30) { /* MPI counts are int */
    int n = (int)(count - at < (1 << 30) ? count - at : 1 << 30);
    int err = reduce ? MPI_Reduce(root ? MPI_IN_PLACE : buf + at, buf + at, n, MPI_FLOAT, MPI_SUM,
                                  0, c->comm)
                     : MPI_Bcast(buf + at, n, MPI_FLOAT, 0, c->comm);
    if (err != MPI_SUCCESS) swn_fatal("MPI_%s failed", reduce ? "Reduce" : "Bcast");
  }
}

void swn_rooted(SwnComm *c, SwnCollective kind, float *buf, int64_t count) {
  if (c->size <= 1 || count <= 0) return;
  if (c->half) swn_fatal("internal: rooted collectives are not compressed");
  slow_link(c, count);
  if (c->algorithm == SWN_ALLREDUCE_MPI) {
    mpi_rooted(c, kind, buf, count);
    return;
  }
  execute_cached(c, kind, SWN_ALLREDUCE_HIER, buf, count);
}
