/* The command line of a generated program (docs/runtime.md). */
#ifndef SWNC_RT_OPTIONS_H
#define SWNC_RT_OPTIONS_H

#include "swnc_rt.h"

/* Bounds of what a user may ask for. Counts of iterations and images stay below 2^53, so they
 * are exact as doubles (the learning-rate schedules) and their products with a batch cannot
 * overflow 64 bits; a batch and a thread count are held in an int. */
#define SWN_COUNT_MAX ((int64_t)1 << 53)
enum { SWN_BATCH_MAX = 1 << 24, SWN_THREADS_MAX = 1024 };

typedef struct SwnOptions {
  int64_t epochs, iterations, batch, test_batch;
  int64_t train_size, test_size;
  const char *train[SWN_MAX_FILES], *test[SWN_MAX_FILES];
  int ntrain, ntest;
  int threads;        /* 0: this machine's cores shared among its ranks */
  int loader_threads; /* 0: as many as compute threads for packed data, else 1 */
  int core_groups;    /* workers per process, one per core group (swk_core_groups) */
  uint64_t seed;
  int64_t display;
  const char *log_path, *checkpoint, *resume, *init_weights, *save_gradients, *comm_profile;
  const char *comm_costs;     /* --comm-costs: auto's cost table instead of the start-up probe */
  const char *profile_json;   /* --profile=FILE: the table as JSON too */
  const char *infer, *output; /* --infer IN.npy --output OUT.npy */
  float lr;                   /* --lr: the base learning rate; 0: the compiled one */
  int64_t checkpoint_every;
  bool eval_only, shuffle, quiet, profile, autotune;
  bool strict;                         /* --init-weights: all tensors or none */
  int allreduce;                       /* SwnAllreduceAlgorithm */
  int group_size, chain;               /* 0: groups are machines; chains of 8 */
  int hier_upper;                      /* SwnUpperLevel: hier among the chain heads */
  bool overlap;                        /* allreduce buckets while backward runs */
  int sync;                            /* SwnSync: allreduce, or S-Caffe's reduce to root */
  bool comm_fp16;                      /* --comm-precision fp16: gradients sent as IEEE halves */
  bool scale_lr;                       /* --scale-lr: the learning rate times the number of ranks */
  float sparse_density;                /* --sparse: the fraction of chunks sent (1: dense) */
  int64_t sparse_chunk, sparse_warmup; /* gradients per chunk; warm-up epochs */
} SwnOptions;

/* Defaults from the network file, then the command line. Exits on bad usage. */
void swn_parse_options(const SwnNetwork *net, int argc, char **argv, SwnOptions *o);
/* The evaluation batch of a network whose test_batch is 0 (automatic), for a training batch. */
int64_t swn_auto_test_batch(const SwnNetwork *net, int64_t batch);

#endif
