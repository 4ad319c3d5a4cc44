/* Direct convolution on the channel-blocked layout (B, ceil(N/16), R, C, 16): channel n of
 * pixel (r, c) of image b at ((b * ceil(N/16) + n/16) * R + r) * C + c) * 16 + n % 16, the
 * lanes past N of the last block unused. The block is 16 floats whatever the instruction set
 * (AVX2 holds it as two vectors), so one program's memory layout does not depend on the CPU it
 * starts on. */
#ifndef SWNC_HOST_CONV_DIRECT_H
#define SWNC_HOST_CONV_DIRECT_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels.h"

enum { HOST_BLOCK = 16 };

static inline int host_blocks(int channels) { return (channels + HOST_BLOCK - 1) / HOST_BLOCK; }

/* Floats of a batch of (c, h, w) images in the blocked layout. */
static inline size_t host_blocked_floats(int batch, int c, int h, int w) {
  return (size_t)batch * (size_t)host_blocks(c) * HOST_BLOCK * (size_t)h * (size_t)w;
}

/* The workspace of any of the three computations: packed filters (per block of 16 output
 * channels, per input channel and tap, the 16 output channels' weights side by side) and bias,
 * or the weight gradient's sums; a padded copy of an image per thread. */
size_t host_conv_direct_workspace(const SwkConv *p);

/* y (blocked; its unused lanes 0) = conv(x) + bias; x blocked, or (B,N,R,C) if p->x_planar (a
 * first layer's few channels are not worth a block each). No groups. */
void host_conv_direct_forward(const SwkConv *p, int batch, const float *x, const float *w,
                              const float *bias, float *y, float *ws);

/* The gradients, each alone (the plan may compute one and leave the other to another plan).
 * The input gradient, written or added to dx (blocked), runs as forward convolutions of dY with
 * the flipped, transposed filters: one, or with stride s one per phase of dX's pixels (s^2,
 * workspace.h: host_direct_phase). The weight gradient is stored as dw = keep * dw + scale *
 * grad (runtime/kernels.h), the bias's (if db) with bias_scale; x blocked or (B,N,R,C)
 * (p->x_planar), dy blocked. The input gradient's stores are masked by mask (not NULL: the
 * output of a ReLU, blocked as dx) with p->dx_relu_slope: mask > 0 ? dx : slope * dx. */
void host_conv_direct_input_gradient(const SwkConv *p, int batch, const float *w, const float *dy,
                                     float *dx, bool dx_add, const float *mask, float *ws);
void host_conv_direct_weight_gradient(const SwkConv *p, int batch, const float *x, const float *dy,
                                      float *dw, float *db, float scale, float bias_scale,
                                      float keep, float *ws);

/* db = keep * db + scale * (dY, blocked, summed over images and pixels). */
void host_direct_bias_gradient(const SwkConv *p, int batch, const float *dy, float *db, float scale,
                               float keep);

/* Between (B,N,R,C) and the blocked layout, images of c channels of hw pixels, written or added
 * to y; to_blocked zeroes the unused lanes (or adds 0 to them). */
void host_to_blocked(const float *x, int batch, int c, int hw, float *y, bool add);
void host_from_blocked(const float *x, int batch, int c, int hw, float *y, bool add);

/* The direct kernels choose their instruction set as the GEMM's (isa.h); this switches to
 * another ("avx512", "avx2", "c"), if this CPU runs it (for tests), for the Winograd kernels
 * too, which use the same register blocks. */
bool host_conv_direct_use(const char *isa);

#endif
