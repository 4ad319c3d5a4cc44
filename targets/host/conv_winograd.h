/* Winograd convolution F(m x m, 3 x 3), m = 2 or 4, on the channel-blocked layout
 * (conv_direct.h): 3 x 3 filters, stride 1, padding up to 2, no groups. The output is cut into
 * m x m tiles; each tile's (m + 2) x (m + 2) input pixels are transformed, multiplied
 * element-wise by the transformed filters and summed over the input channels, and transformed
 * back: (m + 2)^2 multiplications per tile and channel pair where the definition takes 9 m^2
 * (2.25x fewer for m = 2, 4x for m = 4), for more rounding (conv_winograd.c). */
#ifndef SWNC_HOST_CONV_WINOGRAD_H
#define SWNC_HOST_CONV_WINOGRAD_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels.h"

bool host_conv_winograd_legal(const SwkConv *p);

/* Floats of workspace any of the three computations asks for with output tile m. */
size_t host_conv_winograd_workspace(const SwkConv *p, int m);

/* y (blocked, unused lanes 0) = conv(x) + bias; x blocked. */
void host_conv_winograd_forward(const SwkConv *p, int m, int batch, const float *x, const float *w,
                                const float *bias, float *y, float *ws);

/* dx (blocked) = or += the input gradient: the forward convolution of dY by the flipped,
 * transposed filters. */
void host_conv_winograd_input_gradient(const SwkConv *p, int m, int batch, const float *w,
                                       const float *dy, float *dx, bool dx_add, float *ws);

/* dw = keep * dw + scale * the weight gradient, db (if not NULL) with bias_scale; x and dy
 * blocked. */
void host_conv_winograd_weight_gradient(const SwkConv *p, int m, int batch, const float *x,
                                        const float *dy, float *dw, float *db, float scale,
                                        float bias_scale, float keep, float *ws);

#endif
