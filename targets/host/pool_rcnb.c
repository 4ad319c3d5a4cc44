/* Max and average pooling on the (R, C, N, B) layout, with the semantics of pool.c (Caffe's
 * windows; the first maximum in window order wins; averages divide by the window's extent in
 * the padded input). An output pixel's C x B values are contiguous, as are an input pixel's:
 * the loops run over window pixels and, innermost, over those C x B lanes, which vectorise.
 * Forward splits output rows over threads; backward splits the lanes, so no two threads add to
 * one input element. argmax holds the input pixel (ih * w + iw) per output element, as pool.c. */
#include <omp.h>
#include <string.h>

#include "kernels.h"
#include "pool_window.h"

static void max_pixel(const SwkPool *p, SwnWindow s, size_t lanes, const float *x, float *y,
                      int32_t *am) {
  int32_t first = s.h0 * p->w + s.w0;
  memcpy(y, x + (size_t)first * lanes, sizeof(float) * lanes);
  for (size_t j = 0; j < lanes; j++) am[j] = first;
  for (int ih = s.h0; ih < s.h1; ih++)
    for (int iw = s.w0; iw < s.w1; iw++) {
      int32_t at = ih * p->w + iw;
      const float *xs = x + (size_t)at * lanes;
      for (size_t j = 0; j < lanes; j++) {
        bool greater = xs[j] > y[j];
        y[j] = greater ? xs[j] : y[j];
        am[j] = greater ? at : am[j];
      }
    }
}

static void avg_pixel(const SwkPool *p, SwnWindow s, size_t lanes, const float *x, float *y) {
  memset(y, 0, sizeof(float) * lanes);
  for (int ih = s.h0; ih < s.h1; ih++)
    for (int iw = s.w0; iw < s.w1; iw++) {
      const float *xs = x + ((size_t)ih * p->w + iw) * lanes;
      for (size_t j = 0; j < lanes; j++) y[j] += xs[j];
    }
  for (size_t j = 0; j < lanes; j++) y[j] /= s.area;
}

void swk_pool_rcnb_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  size_t lanes = (size_t)p->c * batch;
#pragma omp parallel for schedule(static)
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      size_t o = ((size_t)oh * p->wo + ow) * lanes;
      if (p->max)
        max_pixel(p, SWN_POOL_WINDOW(p, oh, ow), lanes, x, y + o, argmax + o);
      else
        avg_pixel(p, SWN_POOL_WINDOW(p, oh, ow), lanes, x, y + o);
    }
}

/* Lanes [from, to) of every pixel. */
static void backward_lanes(const SwkPool *p, size_t lanes, size_t from, size_t to, const float *dy,
                           const int32_t *argmax, float *dx, bool dx_add) {
  if (!dx_add)
    for (int i = 0; i < p->h * p->w; i++)
      memset(dx + (size_t)i * lanes + from, 0, sizeof(float) * (to - from));
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      size_t o = ((size_t)oh * p->wo + ow) * lanes;
      if (p->max) {
        for (size_t j = from; j < to; j++) dx[(size_t)argmax[o + j] * lanes + j] += dy[o + j];
        continue;
      }
      SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
      for (int ih = s.h0; ih < s.h1; ih++)
        for (int iw = s.w0; iw < s.w1; iw++) {
          float *d = dx + ((size_t)ih * p->w + iw) * lanes;
          for (size_t j = from; j < to; j++) d[j] += dy[o + j] / s.area;
        }
    }
}

void swk_pool_rcnb_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                            float *dx, bool dx_add) {
  size_t lanes = (size_t)p->c * batch;
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    backward_lanes(p, lanes, lanes * (size_t)t / (size_t)nt, lanes * (size_t)(t + 1) / (size_t)nt,
                   dy, argmax, dx, dx_add);
  }
}
