/* Internal interfaces of the runtime's training driver. */
#ifndef SWNC_RT_TRAIN_H
#define SWNC_RT_TRAIN_H

#include <stdio.h>

#include "options.h"

void swn_init_parameters(const SwnNetwork *net, uint64_t seed, float *params, float *state);
float swn_learning_rate(const SwnTrainConfig *t, int64_t iteration, int64_t total);

/* A checkpoint's checksum: FNV-1a, 64 bits, continued from `sum` (SWN_CHECKSUM_START for the
 * first bytes). Exported by the runtime's shared library for tools/swnc_checkpoint.py. */
#define SWN_CHECKSUM_START 14695981039346656037ull
uint64_t swn_checksum(uint64_t sum, const void *data, size_t n);

/* Checkpoints (format in docs/runtime.md). `momentum` may be NULL: saved as zeros, or not
 * loaded. Loading refuses files of another network, other sizes, or damaged ones. */
void swn_save_checkpoint(const SwnNetwork *net, const char *path, const float *params,
                         const float *momentum, const float *state, int64_t iteration,
                         uint64_t seed);
void swn_load_checkpoint(const SwnNetwork *net, const char *path, float *params, float *momentum,
                         float *state, int64_t *iteration, uint64_t *seed);

/* A checkpoint read and checked whole (any network's): its tables, and its pools inside `data`
 * (not aligned: copy out with memcpy). A damaged or malformed file is a fatal error. */
enum { SWN_CHECKPOINT_MAX_DIMS = 8 };
typedef struct SwnCheckpointTensor {
  const char *name; /* name_len bytes, not terminated */
  int name_len, ndims;
  int64_t dims[SWN_CHECKPOINT_MAX_DIMS];
  int64_t offset, count; /* in its pool, floats */
} SwnCheckpointTensor;
typedef struct SwnCheckpoint {
  const char *path;
  unsigned char *data;
  char name[65]; /* the network's */
  uint64_t hash, seed;
  uint32_t pools;
  int64_t iteration, param_words, state_words;
  int nparams, nstate;
  SwnCheckpointTensor *params, *state;
  const void *param_pool, *moment_pool, *state_pool;
} SwnCheckpoint;
SwnCheckpoint swn_read_checkpoint(const char *path);
void swn_checkpoint_free(SwnCheckpoint *c);

/* --init-weights: the checkpoint's parameters and batch-norm statistics into a network
 * initialised afresh (params and state already hold that), by name where the shapes agree;
 * reports what was loaded, skipped (another shape) and left fresh. `strict`: every tensor of
 * the network, of the same shape, and no other, or a fatal error naming the first difference. */
void swn_load_weights(const SwnNetwork *net, const char *path, float *params, float *state,
                      bool strict, bool quiet);

/* Progress on the terminal (a bar when stdout is one) and as JSON lines in the log. */
typedef struct SwnProgress {
  FILE *log;
  const char *log_path;
  bool tty, quiet;
  int64_t total, iters_per_epoch, epochs;
  int64_t batch; /* images per iteration */
  double start, window_start, last_draw;
  int64_t window_first;
  double loss_sum;
  int loss_count;
  float last_accuracy; /* of the latest evaluation, or NAN */
} SwnProgress;

/* `images` per iteration (every rank's micro-batches) */
void swn_progress_start(SwnProgress *p, const SwnOptions *o, int64_t images, int64_t first,
                        int64_t total, int64_t per_epoch);
void swn_progress_iteration(SwnProgress *p, int64_t iteration, float loss); /* every iteration */
void swn_progress_line(SwnProgress *p, int64_t iteration, float lr);        /* every `display` */
void swn_progress_test(SwnProgress *p, int64_t iteration, float loss, float accuracy,
                       int64_t images);
void swn_progress_finish(SwnProgress *p, int64_t iterations, int64_t images);

#endif
