/* The training-batch loader: a thread prepares the next batch while the current one computes.
 * Epoch e visits the images in a permutation that is a pure function of (seed, e), so a run
 * resumed at any iteration sees the same batches as one that never stopped. With R ranks the
 * global batch is R x batch images: every rank computes the permutation from the seed and
 * reads only its own slice (rank r: images r x batch .. of each global batch), so R ranks see
 * exactly the images one process with batch R x batch would. */
#ifndef SWNC_RT_LOADER_H
#define SWNC_RT_LOADER_H

#include <pthread.h>

#include "dataset.h"

typedef struct SwnBatchSlot {
  float *images;
  int32_t *labels;
  int64_t iteration; /* -1: empty */
} SwnBatchSlot;

typedef struct SwnLoader {
  const SwnNetwork *net;
  const SwnDataset *data;
  int batch, rank, ranks;
  bool shuffle;
  uint64_t seed;
  int64_t iters_per_epoch, next;
  int64_t *order, order_epoch;
  int64_t *indices;
  SwnBatchSlot slot[2];
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  bool stop;
} SwnLoader;

int64_t swn_iterations_per_epoch(int64_t images, int64_t global_batch);
void swn_loader_start(SwnLoader *l, const SwnNetwork *net, const SwnDataset *data, int batch,
                      int rank, int ranks, bool shuffle, uint64_t seed, int64_t first_iteration);
/* Copies the batch of `iteration` (the next in sequence) into the network's buffers. */
void swn_loader_next(SwnLoader *l, int64_t iteration, float *images, int32_t *labels);
void swn_loader_stop(SwnLoader *l);

#endif
