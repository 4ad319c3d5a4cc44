/* A convolution's column matrix: for `channels` channels of images side by side, the
 * (K = channels*kh*kw) x (images*ho*wo) matrix whose column j holds the input window of output
 * pixel j. The GEMM reads it block by block straight from the images as it packs
 * (host_columns), so it is never written out whole. The images are stored with their padding
 * (host_pad copies them so, unless the convolution has none): then every run of columns in
 * one output row is a plain copy, with no test for the border. */
#ifndef SWNC_HOST_IM2COL_H
#define SWNC_HOST_IM2COL_H

#include "gemm.h"
#include "kernels.h"

typedef struct HostColumns {
  const SwkConv *conv; /* kernel, stride and output sizes */
  const float *x;      /* the first image's first channel, padding included: tap (ki, kj) of */
  int height, width;   /* output pixel (oh, ow) is at row oh*sh + ki*dh, column ow*sw + kj*dw */
  size_t image_floats; /* from one image to the next */
  int row0;            /* the matrix starts at this row of the whole one */
} HostColumns;

static inline bool host_padded(const SwkConv *p) { return p->ph > 0 || p->pw > 0; }

/* An image's rows and columns with its padding: enough for the last window. */
static inline int host_padded_height(const SwkConv *p) {
  int used = (p->ho - 1) * p->sh + p->dh * (p->kh - 1) + 1;
  return p->h + 2 * p->ph > used ? p->h + 2 * p->ph : used;
}

static inline int host_padded_width(const SwkConv *p) {
  int used = (p->wo - 1) * p->sw + p->dw * (p->kw - 1) + 1;
  return p->w + 2 * p->pw > used ? p->w + 2 * p->pw : used;
}

/* How many floats host_pad needs for `images` images of `channels` channels (0: none, the
 * convolution has no padding). Inline: the target's description sizes workspaces with it. */
static inline size_t host_pad_floats(const SwkConv *p, int channels, int images) {
  if (!host_padded(p)) return 0;
  return (size_t)images * channels * host_padded_height(p) * host_padded_width(p);
}

/* The column matrix of images x, x + image_floats, ... (`images` of them, `channels` channels
 * each): read in place, or from a padded copy in `buffer`. */
HostColumns host_pad(const SwkConv *p, int channels, const float *x, size_t image_floats,
                     int images, float *buffer);

void host_columns_block(const void *columns, int r0, int rows, int c0, int cols, float *dst,
                        size_t pitch);

static inline HostMatrix host_columns(const HostColumns *columns) {
  return (HostMatrix){.block = host_columns_block, .source = columns};
}

/* Adds one image's column matrix (rows `ld` floats apart) back into x (which the caller has
 * zeroed or holds values to add to). */
void host_col2im(const SwkConv *p, int ci, const float *col, size_t ld, float *x);

#endif
