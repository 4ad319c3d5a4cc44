/* The allreduce library (docs/runtime.md, "Distributed training"): sums a float vector in place
 * over all ranks of a communicator with the algorithm asked for, on MPI point-to-point. */
#ifndef SWNC_COMM_H
#define SWNC_COMM_H

#include <mpi.h>

#include "cost.h"
#include "schedule.h"

typedef struct SwnComm {
  MPI_Comm comm; /* a duplicate: nothing else matches our messages */
  int rank, size;
  int *group; /* group (supernode) of each rank */
  SwnTopology topo;
  SwnAllreduceAlgorithm algorithm; /* may be AUTO: chosen per call from `costs` */
  SwnCostTable *costs;             /* what each algorithm costs here (cost.h), or NULL */
  int64_t segment;                 /* floats per message segment (pipelining inside a step) */
  int window;                      /* segments received ahead */
  float *scratch;                  /* window x segment floats */
  bool yield;           /* sleep between polls (a thread beside compute) rather than spin */
  SwnSchedule schedule; /* the last call's, reused while algorithm and count repeat */
  SwnAllreduceAlgorithm scheduled;
  SwnCollective scheduled_kind;
  int64_t scheduled_count;
  struct SwnRequests *requests; /* MPI requests, grown as needed (execute.c) */
  struct SwnShared *shared;     /* the shared window when all ranks share one machine, or NULL */
  double test_link_ns_per_byte; /* SWNC_TEST_LINK_NS_PER_BYTE: a slow link, for tests */
  bool half;                    /* messages in IEEE half precision (swn_comm_set_half) */
  MPI_Op half_sum;              /* MPI_Allreduce's sum of halves */
  uint16_t *halves;             /* MPI_Allreduce's half buffer */
  int64_t halves_cap;
  int64_t bytes_sent; /* by this rank since open (MPI_Allreduce: 2 (p - 1) / p of the vector) */
} SwnComm;

/* Sets up `c` over `comm`. group_size > 0: ranks r / group_size form a group; else one group
 * per shared-memory node (MPI_Comm_split_type). chain: ranks per chain of the hierarchical
 * algorithm (<= 0: 8). pool_words: floats of the buffer the caller will allreduce spans of,
 * placed in shared memory when all ranks share a machine (swn_shared_pool). Collective. */
void swn_comm_open(SwnComm *c, MPI_Comm comm, SwnAllreduceAlgorithm algorithm, int group_size,
                   int chain, int64_t pool_words);
void swn_comm_close(SwnComm *c);
/* Message segments of `segment` floats, `window` received ahead (<= 0: the defaults). */
void swn_comm_set_segments(SwnComm *c, int64_t segment, int window);

/* The hierarchical algorithm's upper level (schedule.h; default auto). */
void swn_comm_set_hier_upper(SwnComm *c, SwnUpperLevel upper);

/* fp16 communication (docs/runtime.md, "Compressed gradients"): every call first scales the
 * vector by a power of two that keeps the sum of all ranks' within half's range, sends and
 * receives halves (sums in float), and leaves every rank the sum rounded to half precision. The
 * shm algorithm sends no messages and is not used. */
void swn_comm_set_half(SwnComm *c, bool half);

/* What `auto` runs for `count` floats: the algorithm the cost table predicts fastest for the
 * bytes sent (halves with fp16, which leaves out shm); MPI_Allreduce without a table. */
SwnAllreduceAlgorithm swn_allreduce_choice(const SwnComm *c, int64_t count);

/* Times every candidate on `buf` (`words` floats, summed in place: zeros are safe) at the cost
 * ladder's sizes up to `words`, fills `t` identically on every rank (probe.c). Collective. */
void swn_comm_probe(SwnComm *c, float *buf, int64_t words, SwnCostTable *t);
/* The table `auto` reads from now on (copied). */
void swn_comm_set_costs(SwnComm *c, const SwnCostTable *t);

/* Sums buf[0..count) over all ranks, in place. `algorithm` AUTO uses the comm's setting. */
void swn_allreduce(SwnComm *c, float *buf, int64_t count, SwnAllreduceAlgorithm algorithm);

/* A rooted collective (schedule.h: REDUCE to rank 0 or BROADCAST from it) of buf[0..count):
 * MPI_Reduce / MPI_Bcast when the algorithm is mpi, else S-Caffe's hierarchical schedule (the
 * chains and upper level of hier). Not compressed. */
void swn_rooted(SwnComm *c, SwnCollective kind, float *buf, int64_t count);

/* Runs one rank's schedule on `buf` (execute.c). */
void swn_execute_schedule(SwnComm *c, const SwnSchedule *s, float *buf);
void swn_requests_free(struct SwnRequests *q);

/* The shared-memory algorithm (shared_memory.c): open sets c->shared when every rank runs on
 * this machine (collective), with a pool of `pool_words` floats in the window that
 * swn_shared_pool returns (NULL otherwise); allreduce needs c->shared and sums spans of the
 * pool in place, other buffers through staging areas. */
void swn_shared_open(SwnComm *c, int64_t pool_words);
float *swn_shared_pool(const SwnComm *c);
void swn_shared_close(SwnComm *c);
void swn_shared_allreduce(SwnComm *c, float *buf, int64_t count);

#endif
