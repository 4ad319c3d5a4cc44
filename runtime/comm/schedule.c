/* Schedules: storage, the shared helpers, and dispatch to the generators. */
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

SwnCommStep swn_step_none(void) { return (SwnCommStep){.send_to = -1, .recv_from = -1}; }

void swn_schedule_add(SwnSchedule *s, SwnCommStep step) {
  if (step.send_count == 0) step.send_to = -1;
  if (step.recv_count == 0) step.recv_from = -1;
  if (step.send_to < 0 && step.recv_from < 0) return; /* nothing to do: both sides agree */
  if (s->nsteps == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 16;
    s->steps = realloc(s->steps, sizeof *s->steps * (size_t)s->cap);
    if (!s->steps) swn_fatal("out of memory (allreduce schedule of %d steps)", s->cap);
  }
  s->steps[s->nsteps++] = step;
}

void swn_block(int64_t count, int blocks, int b, int64_t *offset, int64_t *n) {
  int64_t lo = count * b / blocks, hi = count * (b + 1) / blocks;
  *offset = lo;
  *n = hi - lo;
}

void swn_schedule_build(SwnAllreduceAlgorithm algorithm, const SwnTopology *t, int rank,
                        int64_t count, SwnSchedule *s) {
  s->rank = rank;
  s->nsteps = 0;
  if (t->size <= 1 || count <= 0) return;
  switch (algorithm) {
  case SWN_ALLREDUCE_RING: {
    int *order = swn_alloc(sizeof(int) * (size_t)t->size);
    swn_topology_order(t, SWN_MAP_CONTIGUOUS, order); /* neighbours share a group where they can */
    swn_schedule_ring(order, t->size, rank, 0, count, s);
    free(order);
    return;
  }
  case SWN_ALLREDUCE_HIER: swn_schedule_hierarchical(t, rank, count, s); return;
  default: swn_schedule_halving_doubling(t, rank, count, s); return;
  }
}

void swn_schedule_free(SwnSchedule *s) {
  free(s->steps);
  *s = (SwnSchedule){0};
}
