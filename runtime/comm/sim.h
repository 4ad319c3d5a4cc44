/* The network simulator: replays the allreduce schedules of all ranks (the generators the MPI
 * executor runs) on a modelled machine, and predicts data-parallel training from a profile of
 * one iteration. Pure computation: no MPI. */
#ifndef SWNC_COMM_SIM_H
#define SWNC_COMM_SIM_H

#include <stdio.h>

#include "cost.h"
#include "schedule.h"

/* p nodes, node r in supernode r / q. A message of n bytes costs alpha + beta n, beta = beta1
 * inside a supernode and oversubscription x beta1 across; summing costs gamma per byte. A
 * transfer starts when both its sender and its receiver have reached the step holding it. */
typedef struct SwnMachine {
  int nodes, per_supernode;
  double alpha, beta, oversubscription, gamma;
} SwnMachine;

typedef struct SwnSimResult {
  double seconds;                  /* until the last rank finishes */
  double bytes, cross_bytes;       /* sent in total, and between supernodes */
  int steps;                       /* the longest rank's step count */
  double *step_bytes, *step_cross; /* per step index, summed over ranks (NULL unless asked) */
} SwnSimResult;

/* The algorithm simulated, as the runtime's options set it. */
typedef struct SwnAllreduceSetting {
  SwnAllreduceAlgorithm algorithm; /* topo, ring, hier, or auto (swn_predict) */
  SwnRankMap map;                  /* topo's numbering */
  int chain;                       /* hier: ranks per chain (<= 0: 8) */
  SwnUpperLevel upper;             /* hier: among the chain heads */
  SwnCollective collective;        /* ALLREDUCE (0), or a rooted REDUCE or BROADCAST */
  SwnSync sync;                    /* swn_predict: the training schedule (rooted: hier's design) */
} SwnAllreduceSetting;

/* Simulates summing `bytes` (floats) with `a` over the machine (or, a->collective, reducing
 * them to rank 0 or broadcasting them from it with the hierarchical schedule). Returns false (with a message in
 * `error`) if the schedules deadlock, which a correct generator never does. */
bool swn_simulate(const SwnMachine *m, const SwnAllreduceSetting *a, double bytes, bool per_step,
                  SwnSimResult *r, char *error, size_t error_size);
void swn_sim_result_free(SwnSimResult *r);

/* One training iteration as measured (the generated program's --comm-profile). */
typedef struct SwnIterationProfile {
  char network[64];
  int batch;                        /* per rank */
  double forward, backward, update; /* seconds */
  int nbuckets;
  double *bucket_bytes, *bucket_ready; /* ready: seconds after backward began */
} SwnIterationProfile;

/* The largest message or gradient bucket simulated: 1 TiB, beyond any network's gradients. */
#define SWN_SIM_MAX_BYTES 1099511627776.0
bool swn_profile_read(const char *path, SwnIterationProfile *p, char *error, size_t error_size);
void swn_profile_write(const SwnIterationProfile *p, FILE *f);
void swn_profile_release(SwnIterationProfile *p);

/* What the runtime sends of a bucket (docs/runtime.md, "Compressed gradients" and "Sparse
 * gradients"): half: fp16 messages, after a one-float allreduce of the largest magnitude;
 * density < 1: a one-float-per-chunk allreduce of the norms, then ceil(density x chunks)
 * chunks of `chunk` floats, and one pass over the bucket's accumulators (velocity, residual) at
 * the summing rate. {false, 1, 0}: the dense fp32 allreduce. */
typedef struct SwnCompression {
  bool half;
  double density;
  double chunk; /* floats */
} SwnCompression;

/* The cost table of topo, ring and hier on `m` (a's map, chain and upper level), simulated at
 * the ladder's sizes up to `largest` bytes: what the runtime's start-up probe measures. */
bool swn_cost_simulate(const SwnMachine *m, const SwnAllreduceSetting *a, double largest,
                       SwnCostTable *t, char *error, size_t error_size);

/* Predicted iteration on `m`: buckets allreduced in order, each from when it is ready and the
 * previous one is done; update after backward and the last bucket. Algorithm auto runs the
 * runtime's rule on the simulated cost table: buckets merged to its threshold, each job by the
 * algorithm it predicts fastest.
 * A rooted a->sync (S-Caffe's schedules, the runtime's jobs in the runtime's order on one port):
 * sc-b broadcasts the weights whole, then computes, then reduces the gradients whole; sc-ob
 * broadcasts them in the buckets' spans, forward order, and forward's share of each bucket (its
 * share of backward's time, the last bucket taking what follows it) starts once its span has
 * arrived; sc-obr also reduces each bucket from when it is ready. The update (rank 0's) follows
 * the last reduce. Compression is not modelled there (the runtime refuses it). */
typedef struct SwnScaling {
  double iteration, compute, communication, exposed; /* seconds */
  double speedup;                                    /* nodes x single-node iteration / iteration */
  int jobs;                      /* allreduces per iteration (auto merges buckets) */
  double threshold;              /* auto: the bytes buckets merged to */
  SwnAllreduceAlgorithm largest; /* auto: the algorithm of the largest job */
} SwnScaling;

bool swn_predict(const SwnIterationProfile *p, const SwnMachine *m, const SwnAllreduceSetting *a,
                 const SwnCompression *compression, SwnScaling *out, char *error,
                 size_t error_size);

#endif
