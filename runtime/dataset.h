/* Data sets. In-memory sources (idx, cifar) keep their images as uint8 and convert per image;
 * synthetic sets hold nothing (each image is made when a batch asks for it); packed sets
 * (packed.h) hold only labels and their shards' indexes and read each record when it is
 * needed, so a data set of any size costs a few batches of memory. */
#ifndef SWNC_RT_DATASET_H
#define SWNC_RT_DATASET_H

#include "options.h"
#include "packed.h"
#include "transform.h"

typedef struct SwnPackedSet {
  const char *dir;
  SwnPackInfo info;
  SwnRecord *records; /* every image's, in order */
} SwnPackedSet;

typedef struct SwnDataset {
  const char *what; /* "training" or "test" */
  int64_t count;
  int c, h, w;     /* in-memory and synthetic sets: the images' shape */
  uint8_t *pixels; /* in-memory: count x c x h x w (NULL otherwise) */
  int32_t *labels; /* count (NULL if synthetic) */
  bool synthetic;
  uint64_t stream;      /* synthetic: what its images are hashed from */
  SwnPackedSet *packed; /* a packed set, or NULL */
  SwnMeanImage mean;    /* data.mean_file, if the network names one (pixels NULL otherwise) */
} SwnDataset;

/* Loads and validates the training or test set the options name; exits with a message
 * naming the file and the problem if it is unusable. */
void swn_load_dataset(const SwnNetwork *net, const SwnOptions *o, bool train, SwnDataset *d);
void swn_free_dataset(SwnDataset *d);

/* The loaders of each source; `limit` > 0 keeps only the first `limit` images. */
void swn_load_idx(const char *images, const char *labels, int64_t limit, SwnDataset *d);
void swn_load_cifar(const char *const *files, int nfiles, int64_t limit, SwnDataset *d);
void swn_load_packed(const SwnNetwork *net, const char *dir, int64_t limit, SwnDataset *d);
/* `count` synthetic images (0: a default); made per image by swn_fill_image. */
void swn_load_synthetic(const SwnNetwork *net, int64_t count, uint64_t seed, bool train,
                        SwnDataset *d);

/* What one loader thread reads records and decodes images into (grown as needed). */
typedef struct SwnImageScratch {
  uint8_t *bytes, *pixels;
  size_t bytes_size, pixels_size;
} SwnImageScratch;
void swn_free_image_scratch(SwnImageScratch *s);

/* Image `index` as the network's input (in_c x in_h x in_w floats) and its label: cropped and
 * flipped as data.crop and data.mirror say (at random, keyed by `augment_key`, when `train`),
 * then (pixel - mean) x scale. Exits naming the file and record if the image is unusable. */
void swn_fill_image(const SwnNetwork *net, const SwnDataset *d, int64_t index, bool train,
                    uint64_t augment_key, SwnImageScratch *scratch, float *image, int32_t *label);

#endif
