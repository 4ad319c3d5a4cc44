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
