/* Depthwise convolution on the channel-blocked layout (conv_direct.h): one filter per channel
 * (groups = input channels = output channels), MobileNet's and EfficientNet's 3x3 and 5x5
 * layers. A channel's filter touches only its own channel, so the 16 lanes of a block are 16
 * independent convolutions run side by side: each tap is one vector multiply-add per pixel, and
 * there is no reduction over channels for a GEMM to block. The layer moves a float for every
 * few flops: memory-bound, and the kernels are written to pass over each tensor once. */
#ifndef SWNC_HOST_CONV_DEPTHWISE_H
#define SWNC_HOST_CONV_DEPTHWISE_H

#include <stdbool.h>
#include <stddef.h>

#include "conv_direct.h"
#include "kernels.h"

/* Whether p is a depthwise convolution these kernels run (one channel a group, the output's
 * channels the input's). */
static inline bool host_depthwise_legal(const SwkConv *p) {
  return p->ci >= 1 && p->groups == p->ci && p->co == p->ci;
}

/* The weight gradient sums each channel's taps over the batch in this many parts, whatever the
 * thread count (so that its results do not depend on it), then adds the parts in order. */
enum { HOST_DEPTHWISE_PARTS = 8 };

static inline size_t host_depthwise_filter_floats(const SwkConv *p) {
  return (size_t)host_blocks(p->co) * (size_t)p->kh * (size_t)p->kw * HOST_BLOCK;
}

/* Floats of workspace with `threads` threads, the larger of what the computations take:
 * forward and the input gradient, the filters packed by block (16 lanes a tap), the bias, and
 * a row of the output per thread (one written with streaming stores is computed there first);
 * the weight gradient, its partial sums (a tap and the bias per block and part). */
static inline size_t host_conv_depthwise_workspace_for(const SwkConv *p, int threads) {
  size_t bias = (size_t)host_blocks(p->co) * HOST_BLOCK, filters = host_depthwise_filter_floats(p);
  size_t widest = (size_t)(p->w > p->wo ? p->w : p->wo);
  size_t rows = filters + bias + (size_t)threads * widest * HOST_BLOCK;
  size_t partials = HOST_DEPTHWISE_PARTS * (filters + bias);
  return rows > partials ? rows : partials;
}

#endif
