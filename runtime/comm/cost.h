/* What an allreduce costs on this machine, and the `auto` rule that reads it (docs/runtime.md,
 * "Choosing automatically").
 *
 * A cost table holds each candidate algorithm's time at a ladder of sizes: measured at start-up
 * on the job's own ranks (probe.c), measured by bench/allreduce and written to a file, or
 * simulated on a modelled network (swnc-sim). Between two sizes an algorithm costs
 * alpha + beta x bytes with the alpha and beta of that segment, so the table is a measured
 * alpha/beta per size range. The same rule then picks, for every bucket size, the algorithm
 * predicted fastest, and the bucket threshold: the smallest size at which the fastest
 * algorithm reaches half its large-message bandwidth (Hockney's n_1/2: latency at most half of
 * a bucket's time, buckets still small enough to overlap backward). Pure computation: no MPI. */
#ifndef SWNC_COMM_COST_H
#define SWNC_COMM_COST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "schedule.h"

enum { SWN_COST_MAX_SIZES = 16 };

typedef struct SwnCostTable {
  int ranks, groups; /* the communicator measured */
  int nsizes;
  double bytes[SWN_COST_MAX_SIZES]; /* increasing */
  bool has[SWN_ALLREDUCE_COUNT];    /* the candidates measured */
  double seconds[SWN_ALLREDUCE_COUNT][SWN_COST_MAX_SIZES];
} SwnCostTable;

/* The ladder: 1 KiB, 4 KiB, 16 KiB, ... below `largest`, then `largest` itself (at least 1 KiB,
 * at most SWN_COST_MAX_SIZES sizes). Returns the number of sizes and fills t->bytes. */
int swn_cost_ladder(SwnCostTable *t, double largest);

/* Predicted seconds of algorithm `a` (t->has[a]) for `bytes`: piecewise linear through the
 * table, the smallest size's time below it; beyond it, the slope from the largest size back to
 * one at most a quarter of it. */
double swn_cost_time(const SwnCostTable *t, SwnAllreduceAlgorithm a, double bytes);

/* The candidate predicted fastest for `bytes`; messages_only leaves out shm (fp16 sends halves
 * through messages). */
SwnAllreduceAlgorithm swn_cost_choice(const SwnCostTable *t, double bytes, bool messages_only);

/* The bucket threshold in bytes: the smallest power of two from the first size on at which the
 * fastest algorithm takes at most twice its large-message time per byte (the slope beyond the
 * table) times the bytes; the last size if none does. */
double swn_cost_threshold(const SwnCostTable *t, bool messages_only);

/* Merges consecutive buckets (in ready order) into jobs of at least `threshold` bytes, the last
 * job taking what remains: job_of[b] is bucket b's job. Returns the number of jobs. */
int swn_merge_buckets(const double *bytes, int n, double threshold, int *job_of);

/* Text form: "swnc-allreduce-costs 1", "ranks P", "groups G", "sizes B...", then one line per
 * candidate: its name and one time in seconds per size. */
void swn_cost_write(const SwnCostTable *t, FILE *f);
bool swn_cost_read(const char *path, SwnCostTable *t, char *error, size_t error_size);

#endif
