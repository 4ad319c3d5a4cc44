/* A pooling window, shared by the (B,N,R,C) and (R,C,N,B) kernels so that both have Caffe's
 * semantics from one definition. */
#ifndef SWNC_HOST_POOL_WINDOW_H
#define SWNC_HOST_POOL_WINDOW_H

#include "kernels.h"

/* The window of output (oh, ow) clipped to the input, and the divisor of an average: the
 * window's extent within the padded input (Caffe's and PyTorch's count_include_pad). */
typedef struct Window {
  int h0, h1, w0, w1;
  float area;
} Window;

static inline Window pool_window(const SwkPool *p, int oh, int ow) {
  int h0 = oh * p->sh - p->ph, w0 = ow * p->sw - p->pw;
  int h1 = h0 + p->kh < p->h + p->ph ? h0 + p->kh : p->h + p->ph;
  int w1 = w0 + p->kw < p->w + p->pw ? w0 + p->kw : p->w + p->pw;
  Window win = {h0 < 0 ? 0 : h0, h1 > p->h ? p->h : h1, w0 < 0 ? 0 : w0, w1 > p->w ? p->w : w1,
                (float)((h1 - h0) * (w1 - w0))};
  return win;
}

#endif
