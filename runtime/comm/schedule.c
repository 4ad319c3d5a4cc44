/* Schedules: the algorithms' names, and dispatch to the generators (ring.c,
 * halving_doubling.c, hierarchical.c), which build on steps.c. */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

#include "../util.h"

const char *const swn_allreduce_names[SWN_ALLREDUCE_COUNT] = {"auto", "topo", "ring",
                                                              "hier", "shm",  "mpi"};

const char *const swn_upper_names[SWN_UPPER_COUNT] = {"auto", "binomial", "ring", "chain"};

const char *const swn_sync_names[SWN_SYNC_COUNT] = {"allreduce", "sc-b", "sc-ob", "sc-obr"};

static int find(const char *const *names, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

int swn_allreduce_find(const char *name) {
  return find(swn_allreduce_names, SWN_ALLREDUCE_COUNT, name);
}

int swn_upper_find(const char *name) { return find(swn_upper_names, SWN_UPPER_COUNT, name); }

int swn_sync_find(const char *name) { return find(swn_sync_names, SWN_SYNC_COUNT, name); }

void swn_schedule_build(SwnAllreduceAlgorithm algorithm, const SwnTopology *t, int rank,
                        int64_t count, SwnSchedule *s) {
  s->rank = rank;
  s->nsteps = 0;
  if (t->size <= 1 || count <= 0) return;
  if (algorithm == SWN_ALLREDUCE_RING) {
    int *order = swn_alloc(sizeof(int) * (size_t)t->size);
    swn_topology_order(t, SWN_MAP_CONTIGUOUS, order); /* neighbours share a group where they can */
    swn_schedule_ring(order, t->size, rank, 0, count, s);
    free(order);
  } else if (algorithm == SWN_ALLREDUCE_HIER) {
    swn_schedule_hierarchical(t, rank, count, s);
  } else {
    swn_schedule_halving_doubling(t, rank, count, s);
  }
}
