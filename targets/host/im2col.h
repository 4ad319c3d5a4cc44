/* im2col / col2im for one image and one group: the (K = ci*kh*kw) x (ho*wo) matrix whose
 * column j holds the input window of output pixel j; padding reads as zero. Rows are `ld`
 * floats apart, so that several images can sit side by side in one wider matrix. */
#ifndef SWNC_HOST_IM2COL_H
#define SWNC_HOST_IM2COL_H

#include "kernels.h"

void host_im2col(const SwkConv *p, int ci, const float *x, float *col, size_t ld);
/* Adds the columns back into x (which the caller has zeroed or holds values to add to). */
void host_col2im(const SwkConv *p, int ci, const float *col, size_t ld, float *x);

#endif
