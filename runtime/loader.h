/* The batch loader: a pool of threads prepares the next batches while the current one
 * computes, image by image (read, decode, crop, flip, centre), two batches ahead at most, so
 * data memory stays bounded whatever the data set's size.
 *
 * Training: epoch e visits the images in a permutation that is a pure function of (seed, e),
 * so a run resumed at any iteration sees the same batches as one that never stopped. With R
 * ranks the global batch is R x batch images: every rank computes the permutation from the
 * seed and reads only its own slice (rank r: images r x batch .. of each global batch), so R
 * ranks see exactly the images one process with batch R x batch would. Crops and flips hash
 * (seed, epoch, image): the same whatever the thread or rank count.
 *
 * Evaluation: the set in order, in batches of `batch` (the last may be smaller); rank r takes
 * batches r, r + R, ... */
#ifndef SWNC_RT_LOADER_H
#define SWNC_RT_LOADER_H

#include <pthread.h>

#include "dataset.h"

typedef struct SwnBatchPlan {
  bool train; /* training order and random augmentation; else evaluation order */
  int batch, rank, ranks;
  bool shuffle;
  uint64_t seed;
  int64_t first; /* the first iteration (training) or batch (evaluation) asked for */
} SwnBatchPlan;

typedef struct SwnBatchSlot {
  float *images;
  int32_t *labels;
  int64_t *indices;
  int64_t iteration; /* -1: empty */
  int n, done;       /* images in the batch, and prepared */
} SwnBatchSlot;

enum { SWN_LOADER_DEPTH = 2, SWN_LOADER_MAX_THREADS = 64 };

typedef struct SwnLoader {
  const SwnNetwork *net;
  const SwnDataset *data;
  SwnBatchPlan plan;
  int64_t iters_per_epoch, end; /* end: one past the last iteration there is to prepare */
  int64_t *order, order_epoch;
  SwnBatchSlot slot[SWN_LOADER_DEPTH];
  int64_t claim_it, consumed; /* the iteration being handed out, and the next one asked for */
  int claim_image, nthreads;
  struct SwnLoaderThread *threads;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  bool stop;
} SwnLoader;

int64_t swn_iterations_per_epoch(int64_t images, int64_t global_batch);
/* This rank's evaluation batches of a set of `images`; the images of its batch k (the first in
 * *first). */
int64_t swn_evaluation_batches(int64_t images, int batch, int rank, int ranks);
int swn_evaluation_batch(int64_t images, int batch, int rank, int ranks, int64_t k, int64_t *first);
void swn_loader_start(SwnLoader *l, const SwnNetwork *net, const SwnDataset *data,
                      const SwnBatchPlan *plan, int threads);
/* Copies the batch of `iteration` (the next in sequence) into the network's buffers. */
void swn_loader_next(SwnLoader *l, int64_t iteration, float *images, int32_t *labels);
void swn_loader_stop(SwnLoader *l);

#endif
