/* Winograd convolution F(m x m, r x r) on the channel-blocked layout (conv_direct.h):
 * F(2x2, 3x3), F(4x4, 3x3) or F(2x2, 5x5), for the shapes host_winograd_legal (workspace.h)
 * accepts. The output is cut into m x m tiles; each tile's alpha x alpha input pixels
 * (alpha = m + r - 1) are transformed, multiplied element-wise by the transformed filters and
 * summed over the input channels, and transformed back: alpha^2 multiplications per tile and
 * channel pair where the definition takes r^2 m^2 (2.25x fewer for F(2x2, 3x3), 4x for
 * F(4x4, 3x3), 2.8x for F(2x2, 5x5)), for more rounding (conv_winograd.c). */
#ifndef SWNC_HOST_CONV_WINOGRAD_H
#define SWNC_HOST_CONV_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels.h"

/* Floats of workspace any of the three computations asks for with output tile m. */
size_t host_conv_winograd_workspace(const SwkConv *p, int m);

/* y (blocked, unused lanes 0) = conv(x) + bias; x blocked. */
void host_conv_winograd_forward(const SwkConv *p, int m, int batch, const float *x, const float *w,
                                const float *bias, float *y, float *ws);

/* dx (blocked) = or += the input gradient: the forward convolution of dY by the flipped,
 * transposed filters; stored masked by mask (not NULL: a ReLU's output, blocked as dx) with
 * p->dx_relu_slope, mask > 0 ? dx : slope * dx. */
void host_conv_winograd_input_gradient(const SwkConv *p, int m, int batch, const float *w,
                                       const float *dy, float *dx, bool dx_add, const float *mask,
                                       float *ws);

/* dw = keep * dw + scale * the weight gradient, db (if not NULL) with bias_scale; x and dy
 * blocked. */
void host_conv_winograd_weight_gradient(const SwkConv *p, int m, int batch, const float *x,
                                        const float *dy, float *dw, float *db, float scale,
                                        float bias_scale, float keep, float *ws);

#endif
