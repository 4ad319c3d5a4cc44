/* Allreduce schedules: what each rank sends, receives and sums, step by step.
 *
 * One generator per algorithm builds, for one rank, the list of its steps; the MPI executor
 * (execute.c) runs that list, and the network simulator (sim.c) replays the lists of all ranks
 * on a modelled machine. Both use the same generators, so what is simulated is what runs.
 * Generators are pure functions of (algorithm, topology, rank, count): no MPI. */
#ifndef SWNC_COMM_SCHEDULE_H
#define SWNC_COMM_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  SWN_ALLREDUCE_AUTO,
  SWN_ALLREDUCE_TOPO, /* recursive halving + doubling over the supernode-aware rank map */
  SWN_ALLREDUCE_RING, /* reduce-scatter + allgather around a ring */
  SWN_ALLREDUCE_HIER, /* chunked chains inside groups, leaders across, chains back */
  SWN_ALLREDUCE_SHM,  /* one machine: summed through a shared window (shared_memory.c) */
  SWN_ALLREDUCE_MPI,  /* MPI_Allreduce: the baseline (no schedule) */
  SWN_ALLREDUCE_COUNT
} SwnAllreduceAlgorithm;

extern const char *const swn_allreduce_names[SWN_ALLREDUCE_COUNT]; /* "auto", "topo", ... */
/* The algorithm called `name`, or -1. */
int swn_allreduce_find(const char *name);

/* The hierarchical algorithm's upper level, among the chain heads (S-Caffe): a binomial tree
 * (reduce to the first head, broadcast back: "chain-binomial"), a ring, or one more pipelined
 * chain ("chain of chains"); auto: binomial below 64 KiB, where latency rules, ring above. */
typedef enum {
  SWN_UPPER_AUTO,
  SWN_UPPER_BINOMIAL,
  SWN_UPPER_RING,
  SWN_UPPER_CHAIN,
  SWN_UPPER_COUNT
} SwnUpperLevel;

extern const char *const swn_upper_names[SWN_UPPER_COUNT]; /* "auto", "binomial", ... */
/* The upper level called `name`, or -1. */
int swn_upper_find(const char *name);

/* How data-parallel training exchanges what it must, per iteration (S-Caffe's schedules; the
 * rooted ones reduce to rank 0 and broadcast from it, docs/runtime.md "Reduce to root"):
 * ALLREDUCE: gradient buckets summed on every rank while backward runs; every rank updates.
 * SC_B: the gradients reduced to rank 0 after backward; rank 0 updates; the weights broadcast
 *   whole before the next forward.
 * SC_OB: as SC_B, but the weights broadcast in stages (the gradient buckets' spans, in forward
 *   order), each waited for just before the first layer that reads it.
 * SC_OBR: as SC_OB, and each bucket reduced to rank 0 while backward runs.
 * EASGD keeps its ranks' own updates; a rooted schedule sums its weights to rank 0, which alone
 * moves the center, and broadcasts the center (before forward with SC_B, else overlapped). */
typedef enum {
  SWN_SYNC_ALLREDUCE,
  SWN_SYNC_SC_B,
  SWN_SYNC_SC_OB,
  SWN_SYNC_SC_OBR,
  SWN_SYNC_COUNT
} SwnSync;

extern const char *const swn_sync_names[SWN_SYNC_COUNT]; /* "allreduce", "sc-b", ... */
/* The schedule called `name`, or -1. */
int swn_sync_find(const char *name);

/* Which ranks share a supernode (a group), and how the topology-aware algorithm numbers them. */
typedef enum { SWN_MAP_ROUND_ROBIN, SWN_MAP_CONTIGUOUS } SwnRankMap;

typedef struct SwnTopology {
  int size;         /* ranks */
  const int *group; /* group (supernode) of each rank, 0..ngroups-1 */
  int ngroups;
  SwnRankMap map;      /* virtual numbering for SWN_ALLREDUCE_TOPO */
  int chain;           /* SWN_ALLREDUCE_HIER: ranks per chain (>= 1) */
  int64_t chunk;       /* SWN_ALLREDUCE_HIER: floats per pipelined chunk (>= 1) */
  SwnUpperLevel upper; /* SWN_ALLREDUCE_HIER: among the chain heads */
} SwnTopology;

/* The upper level `hier` runs among the heads for `count` floats (resolves auto). */
SwnUpperLevel swn_upper_choice(const SwnTopology *t, int64_t count);

/* What a schedule computes. ALLREDUCE: every rank ends with the sum. The rooted collectives of
 * S-Caffe's reduce-to-root schedules, rank 0 the root: REDUCE leaves the sum in rank 0's buffer
 * (the others' hold partial sums), BROADCAST copies rank 0's buffer to every rank. */
typedef enum {
  SWN_COLLECTIVE_ALLREDUCE,
  SWN_COLLECTIVE_REDUCE,
  SWN_COLLECTIVE_BROADCAST
} SwnCollective;

/* The upper level of a rooted collective among the chain heads: a binomial tree or a chain of
 * chains (a ring has no root: ring means chain); auto: binomial below 64 KiB, chain above. */
SwnUpperLevel swn_upper_rooted_choice(const SwnTopology *t, int64_t count);

/* The hierarchical chains' pipelined chunk, in floats (the runtime's and the simulator's). */
enum { SWN_CHAIN_CHUNK_FLOATS = 65536 };

/* One step: an optional send and an optional receive, both in flight together. A step starts
 * after the rank's previous step has completed. Messages between two ranks match in order. */
typedef struct SwnCommStep {
  int send_to; /* -1: none */
  int64_t send_offset, send_count;
  int recv_from; /* -1: none */
  int64_t recv_offset, recv_count;
  bool recv_sum; /* add into the buffer (else copy) */
} SwnCommStep;

typedef struct SwnSchedule {
  int rank, nsteps, cap;
  SwnCommStep *steps;
} SwnSchedule;

/* Builds rank `rank`'s schedule for summing `count` floats; `algorithm` is TOPO, RING or HIER.
 * Reuses `s`'s storage (zero-initialise it before the first call; free with swn_schedule_free). */
void swn_schedule_build(SwnAllreduceAlgorithm algorithm, const SwnTopology *t, int rank,
                        int64_t count, SwnSchedule *s);
/* Rank `rank`'s schedule of a rooted collective (REDUCE or BROADCAST) of `count` floats:
 * S-Caffe's hierarchical design, the chains of `hier` towards (or from) their heads and the
 * heads' upper level towards (or from) rank 0, which heads the first chain. */
void swn_schedule_rooted(SwnCollective kind, const SwnTopology *t, int rank, int64_t count,
                         SwnSchedule *s);
void swn_schedule_free(SwnSchedule *s);

/* Helpers for the generators (schedule.c). */
void swn_schedule_add(SwnSchedule *s, SwnCommStep step);
SwnCommStep swn_step_none(void);
/* Floats [*offset, *offset + *count) of block `b` of `count` split into `blocks` near-equal blocks. */
void swn_block(int64_t count, int blocks, int b, int64_t *offset, int64_t *n);

/* The generators (one file each). `order` lists real ranks in the order the algorithm uses. */
void swn_schedule_halving_doubling(const SwnTopology *t, int rank, int64_t count, SwnSchedule *s);
void swn_schedule_ring(const int *order, int n, int rank, int64_t offset, int64_t count,
                       SwnSchedule *s);
void swn_schedule_hierarchical(const SwnTopology *t, int rank, int64_t count, SwnSchedule *s);

/* Virtual numbering (topology.c): out[v] = the real rank numbered v. Round robin numbers the
 * first rank of every group, then the second of every group, ...; contiguous numbers group 0's
 * ranks, then group 1's, ... Within a group, ranks keep their relative order. */
void swn_topology_order(const SwnTopology *t, SwnRankMap map, int *out);

#endif
