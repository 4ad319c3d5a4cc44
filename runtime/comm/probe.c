/* The start-up probe (cost.h): every candidate algorithm timed on the job's own ranks at the
 * cost ladder's sizes, so `auto` chooses from this machine's alpha and beta. Every rank takes
 * the slowest rank's time: all get the same table and choose the same algorithm for every
 * bucket. */
#include <stdlib.h>

#include "../util.h"
#include "comm.h"

/* Each time is the best over ROUNDS rounds that alternate the candidates (drift on a shared
 * machine hits them alike) of calls_for(bytes) calls (more for small sizes, whose times are
 * noisier: about 1 ms of calls, at least 3). */
enum { ROUNDS = 2, MIN_CALLS = 3, MAX_CALLS = 64 };

static int calls_for(double bytes) {
  double calls = 1e6 / bytes; /* about 1 ms at 1 GB/s */
  return calls < MIN_CALLS ? MIN_CALLS : calls > MAX_CALLS ? MAX_CALLS : (int)calls;
}

static double best_of_calls(SwnComm *c, SwnAllreduceAlgorithm a, float *buf, int64_t count,
                            int calls) {
  double best = 1e30;
  for (int i = 0; i < calls; i++) {
    MPI_Barrier(c->comm);
    double start = MPI_Wtime();
    swn_allreduce(c, buf, count, a);
    double t = MPI_Wtime() - start;
    best = t < best ? t : best;
  }
  return best;
}

void swn_comm_probe(SwnComm *c, float *buf, int64_t words, SwnCostTable *t) {
  *t = (SwnCostTable){.ranks = c->size, .groups = c->topo.ngroups};
  swn_cost_ladder(t, 4.0 * (double)words);
  for (int a = SWN_ALLREDUCE_TOPO; a < SWN_ALLREDUCE_COUNT; a++)
    t->has[a] = a != SWN_ALLREDUCE_SHM || c->shared;
  bool half = c->half;
  c->half = false; /* the table is of fp32; fp16 looks it up at its own bytes */
  for (int i = 0; i < t->nsizes; i++) {
    int64_t count = (int64_t)(t->bytes[i] / 4);
    for (int a = 0; a < SWN_ALLREDUCE_COUNT; a++) {
      t->seconds[a][i] = 1e30;
      if (t->has[a]) swn_allreduce(c, buf, count, (SwnAllreduceAlgorithm)a); /* warm-up */
    }
    for (int round = 0; round < ROUNDS; round++)
      for (int a = 0; a < SWN_ALLREDUCE_COUNT; a++)
        if (t->has[a]) {
          double s = best_of_calls(c, (SwnAllreduceAlgorithm)a, buf, count, calls_for(t->bytes[i]));
          t->seconds[a][i] = s < t->seconds[a][i] ? s : t->seconds[a][i];
        }
  }
  c->half = half;
  MPI_Allreduce(MPI_IN_PLACE, t->seconds, (int)(sizeof t->seconds / sizeof(double)), MPI_DOUBLE,
                MPI_MAX, c->comm);
  c->bytes_sent = 0; /* the summary counts training's bytes */
}
