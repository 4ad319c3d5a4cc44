/* From stored 8-bit pixels to the network's input (transform.c). */
#ifndef SWNC_RT_TRANSFORM_H
#define SWNC_RT_TRANSFORM_H

#include <stddef.h>

#include "swnc_rt.h"

/* 8-bit pixels with steps in bytes: planar sources (idx, cifar) step a plane per channel,
 * packed records are interleaved (a step of 1 per channel). */
typedef struct SwnImageView {
  const uint8_t *pixels;
  int c, h, w;
  ptrdiff_t channel_step, row_step, pixel_step;
} SwnImageView;

/* The mean image of data.mean_file: interleaved floats. */
typedef struct SwnMeanImage {
  int c, h, w;
  float *pixels;
} SwnMeanImage;

/* Where the input's window sits in the source, and whether it is flipped. */
typedef struct SwnWindow {
  int y, x;
  bool flip;
} SwnWindow;

/* The random key of one image's augmentation in one epoch. */
uint64_t swn_augment_key(uint64_t seed, int64_t epoch, int64_t image);
/* The window of an image at least as large as the input (the caller checks). */
void swn_crop_window(const SwnNetwork *net, const SwnImageView *src, bool train, uint64_t key,
                     SwnWindow *win);
/* The input (in_c x in_h x in_w floats) from the window of src. */
void swn_transform(const SwnNetwork *net, const SwnImageView *src, const SwnMeanImage *mean,
                   const SwnWindow *win, float *dst);

#endif
