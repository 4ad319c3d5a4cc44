/* The allreduce library's front: groups, algorithm choice, and the call itself. */
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "comm.h"

/* Segments of 1 MiB, 2 received ahead: bench/allreduce on 2 and 4 ranks here (128 KiB segments
 * lost 10-20% at 1-4 MiB to per-message costs; more ahead gained nothing). */
enum { DEFAULT_CHAIN = 8, SEGMENT_FLOATS = 262144, WINDOW = 2 };
enum { AUTO_MPI_BELOW = 64 << 10, AUTO_RING_FROM = 4 << 20 }; /* bytes */

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
                   int chain) {
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
}

void swn_comm_set_segments(SwnComm *c, int64_t segment, int window) {
  c->segment = segment > 0 ? segment : SEGMENT_FLOATS;
  c->window = window > 0 ? window : WINDOW;
  free(c->scratch);
  c->scratch = swn_alloc(sizeof(float) * (size_t)(c->segment * c->window));
}

void swn_comm_close(SwnComm *c) {
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c->group), free(c->scratch);
  swn_schedule_free(&c->schedule);
  swn_requests_free(c->requests);
  *c = (SwnComm){.comm = MPI_COMM_NULL};
}

/* The auto rule (docs/runtime.md; measured by bench/allreduce): below 64 KiB, latency rules
 * and MPI_Allreduce's tuned small-message code wins (about 2x). Above, recursive halving/
 * doubling, which moves the same bytes as a ring in 2 log p instead of 2 (p - 1) steps and
 * keeps the big steps inside groups; except from 4 MiB on one machine of 3 to 8 ranks, where
 * the ring's neighbour-only traffic measured 5-15% faster. */
SwnAllreduceAlgorithm swn_allreduce_choice(const SwnComm *c, int64_t count) {
  if (c->algorithm != SWN_ALLREDUCE_AUTO) return c->algorithm;
  if (count * 4 < AUTO_MPI_BELOW) return SWN_ALLREDUCE_MPI;
  if (c->topo.ngroups == 1 && c->size > 2 && c->size <= 8 && count * 4 >= AUTO_RING_FROM)
    return SWN_ALLREDUCE_RING;
  return SWN_ALLREDUCE_TOPO;
}

void swn_allreduce(SwnComm *c, float *buf, int64_t count, SwnAllreduceAlgorithm algorithm) {
  if (c->size <= 1 || count <= 0) return;
  if (algorithm == SWN_ALLREDUCE_AUTO) algorithm = swn_allreduce_choice(c, count);
  if (algorithm == SWN_ALLREDUCE_MPI) {
    for (int64_t at = 0; at < count; at += 1 << 30) { /* MPI counts are int */
      int n = (int)(count - at < (1 << 30) ? count - at : 1 << 30);
      if (MPI_Allreduce(MPI_IN_PLACE, buf + at, n, MPI_FLOAT, MPI_SUM, c->comm) != MPI_SUCCESS)
        swn_fatal("MPI_Allreduce failed");
    }
    return;
  }
  if (algorithm != c->scheduled || count != c->scheduled_count) {
    swn_schedule_build(algorithm, &c->topo, c->rank, count, &c->schedule);
    c->scheduled = algorithm, c->scheduled_count = count;
  }
  swn_execute_schedule(c, &c->schedule, buf);
}
