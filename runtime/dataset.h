/* Data sets in memory: images stay uint8 and are converted per batch. Synthetic sets hold
 * nothing: each image is made when a batch asks for it (ImageNet-sized sets would not fit). */
#ifndef SWNC_RT_DATASET_H
#define SWNC_RT_DATASET_H

#include "options.h"

typedef struct SwnDataset {
  const char *what; /* "training" or "test" */
  int64_t count;
  int c, h, w;
  uint8_t *pixels; /* count x c x h x w (NULL if synthetic) */
  int32_t *labels; /* count (NULL if synthetic) */
  bool synthetic;
  uint64_t stream; /* synthetic: what its images are hashed from */
} SwnDataset;

/* Loads and validates the training or test set the options name; exits with a message
 * naming the file and the problem if it is unusable. */
void swn_load_dataset(const SwnNetwork *net, const SwnOptions *o, bool train, SwnDataset *d);
void swn_free_dataset(SwnDataset *d);

/* The loaders of each source; `limit` > 0 keeps only the first `limit` images. */
void swn_load_idx(const char *images, const char *labels, int64_t limit, SwnDataset *d);
void swn_load_cifar(const char *const *files, int nfiles, int64_t limit, SwnDataset *d);
/* `count` synthetic images (0: a default); made per batch by swn_fill_batch. */
void swn_load_synthetic(const SwnNetwork *net, int64_t count, uint64_t seed, bool train,
                        SwnDataset *d);

/* Images `indices[0..n)` as the network's input (pixel - mean) * scale, and their labels. */
void swn_fill_batch(const SwnNetwork *net, const SwnDataset *d, const int64_t *indices, int n,
                    float *images, int32_t *labels);

#endif
