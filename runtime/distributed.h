/* Data-parallel training over MPI (docs/runtime.md, "Distributed training"): the gradient
 * allreduce that overlaps backward, EASGD's weight sum, and S-Caffe's reduce-to-root schedules
 * (SwnSync). */
#ifndef SWNC_RT_DISTRIBUTED_H
#define SWNC_RT_DISTRIBUTED_H

#include <pthread.h>
#include <stdio.h>

#include "comm/comm.h"
#include "comm/sparse.h"
#include "options.h"

typedef struct SwnDistributed {
  int rank, size;
  SwnComm comm;  /* the allreduce, used by the communication thread */
  bool threaded; /* a communication thread overlaps the sums with backward */
  bool easgd;    /* sum the weights once per iteration, not the gradients per bucket */
  SwnSync sync;  /* --sync */
  bool rooted;   /* a reduce-to-root schedule, on more than one rank */
  bool settled;  /* rooted: every rank holds rank 0's model (the weights, or EASGD's center) */
  float *grads, *params, *center; /* center: EASGD's, or NULL */
  float *weight_sum;              /* EASGD's, in the shared pool or own */
  float *own_weight_sum;
  int64_t param_words;
  int nbuckets;
  int64_t *offset, *words; /* of each bucket, as backward reports them */
  double *ready_at;        /* when each bucket became ready (swn_now) */
  /* the iteration's jobs, in the order the thread runs them: job j is a collective of
   * job[j][0 .. job_words[j]) (rooted: the weights' broadcasts first) */
  float **job;
  int64_t *job_words;
  SwnCollective *job_kind;
  int *job_of;        /* the job that sums each bucket, this iteration */
  int *broadcast_of;  /* rooted: the job that broadcasts each bucket's weights, or -1 */
  double merge_bytes; /* buckets merge into jobs of at least this (auto's threshold; 0: none) */
  int64_t open_offset, open_words; /* the job being filled: a span of the gradient pool */
  int njobs;                       /* queued this iteration: the next job's index */
  int handed;                      /* buckets backward has handed over, as last queued */
  int64_t jobs;                    /* sums queued since open */
  bool measured;   /* auto's cost table came from the start-up probe (else a file) */
  float job_scale; /* times each sum: 1 / ranks for gradients (their mean) */
  float lr_scale;  /* --scale-lr: the number of ranks, else 1 */
  bool sparse;     /* --sparse: only the largest chunks are sent (comm/sparse.h) */
  SwnSparse chunks;
  float density;             /* this iteration's, after warm-up */
  int queued, done;          /* jobs handed to the thread / summed, this iteration */
  int64_t began_in_backward; /* jobs the thread started before backward handed over the last
                                bucket */
  /* iter_size: gradients of micro-batches before the last wait in gradient_sum; the last one's
   * buckets take the mean of all before they are sent */
  int micro_batch, micro_batches;
  float *gradient_sum;
  bool stop;
  double busy, waited; /* seconds summing / update waiting, since the last reset */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
} SwnDistributed;

/* Sets up the allreduce (algorithm, groups, chains from the options). */
void swn_distributed_open(SwnDistributed *d, const SwnNetwork *net, const SwnOptions *o);
/* Where the gradient pool (what backward hands to the allreduce: gradients, or the momentum they
 * are folded into) must live for the shared-memory algorithm to sum it in place: shared memory
 * of param_words floats when all ranks share a machine, else NULL (the caller allocates). */
float *swn_distributed_gradient_pool(const SwnDistributed *d);
/* The weights, the gradient pool and EASGD's center (or NULL), once allocated. */
void swn_distributed_attach(SwnDistributed *d, float *params, float *grads, float *center);
/* Before micro-batch k (of train.iter_size) of an iteration's forward. */
void swn_distributed_micro_batch(SwnDistributed *d, int k);
/* Before forward: a new iteration of epoch `epoch` (from 0; sparse warm-up). EASGD starts
 * summing the weights, which backward leaves alone. Rooted, rank 0's model starts on its way
 * to the other ranks (sc-b: arrives before this returns). */
void swn_distributed_begin(SwnDistributed *d, int64_t epoch);
/* Whether this rank runs the update: rooted SGD leaves it to rank 0. */
bool swn_distributed_updates(const SwnDistributed *d);
/* The momentum a folded backward keeps of its pool before adding this rank's gradients (the
 * pools of all ranks are summed): momentum / ranks, or rooted momentum on rank 0 and none on the
 * others. */
float swn_distributed_fold_keep(const SwnDistributed *d, float momentum);
/* After the update (or in its place): every job of the iteration done. */
void swn_distributed_end(SwnDistributed *d);
/* Before evaluation: rooted, every rank gets rank 0's model now (collective). */
void swn_distributed_settle(SwnDistributed *d);
/* The update's own momentum: none under sparse exchange, whose momentum correction applies the
 * momentum before sending. */
float swn_distributed_update_momentum(const SwnDistributed *d, float momentum);
/* EASGD, before the update: the elastic step against the center with the weights' sum. */
void swn_distributed_elastic(SwnDistributed *d, float lr, float rho);
void swn_distributed_close(SwnDistributed *d);
/* Prints the set-up once (rank 0). */
void swn_distributed_describe(const SwnDistributed *d, const SwnOptions *o, FILE *f);

/* Rank 0 prints the time spent summing gradients and how much of it the update waited for. */
void swn_distributed_report(const SwnDistributed *d, int64_t iterations, double seconds, FILE *f);

#endif
