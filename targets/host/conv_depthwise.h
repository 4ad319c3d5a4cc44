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

/* Floats of workspace with `threads` threads, the largest of what each computation takes:
 * forward, the filters packed by block (16 lanes a tap) and the bias; the weight gradient, its
 * partial sums (a tap and the bias per block and part); the input gradient, the filters and,
 * strided, a row of dX per thread. */
static inline size_t host_conv_depthwise_workspace_for(const SwkConv *p, int threads) {
  size_t blocks = (size_t)host_blocks(p->co), filters = host_depthwise_filter_floats(p);
  size_t forward = filters + blocks * HOST_BLOCK;
  size_t partials = HOST_DEPTHWISE_PARTS * (filters + blocks * HOST_BLOCK);
  size_t rows = p->no_input_gradient || (p->sh == 1 && p->sw == 1)
                    ? 0
                    : (size_t)threads * (size_t)p->w * HOST_BLOCK;
  size_t input_gradient = filters + rows;
  size_t most = forward > partials ? forward : partials;
  return most > input_gradient ? most : input_gradient;
}

#endif
