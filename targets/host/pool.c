/* Max and average pooling, Caffe's semantics: windows may hang over the padded border; an
 * average divides by the window's extent within the padded input. Max pooling records the
 * index of the maximum within the input plane for backward. Planes are spread over threads. */
#include <string.h>

#include "pool_window.h"

/* Branch-free selection: on random data a compare-and-branch mispredicts half the time,
 * which made this loop ten times slower than it is now. Windows are never empty (pad < kernel). */
static void max_plane(const SwkPool *p, const float *x, float *y, int32_t *argmax) {
  for (int oh = 0; oh < p->ho; oh++) {
    int h0 = oh * p->sh - p->ph, h1 = h0 + p->kh < p->h ? h0 + p->kh : p->h;
    if (h0 < 0) h0 = 0;
    for (int ow = 0; ow < p->wo; ow++) {
      int w0 = ow * p->sw - p->pw, w1 = w0 + p->kw < p->w ? w0 + p->kw : p->w;
      if (w0 < 0) w0 = 0;
      int32_t at = h0 * p->w + w0;
      float best = x[at];
      for (int ih = h0; ih < h1; ih++)
        for (int iw = w0; iw < w1; iw++) {
          int32_t i = ih * p->w + iw;
          float v = x[i];
          bool greater = v > best;
          best = greater ? v : best;
          at = greater ? i : at;
        }
      y[oh * p->wo + ow] = best;
      argmax[oh * p->wo + ow] = at;
    }
  }
}

static void avg_plane(const SwkPool *p, const float *x, float *y) {
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      Window win = pool_window(p, oh, ow);
      float s = 0;
      for (int ih = win.h0; ih < win.h1; ih++)
        for (int iw = win.w0; iw < win.w1; iw++) s += x[ih * p->w + iw];
      y[oh * p->wo + ow] = s / win.area;
    }
}

static void avg_plane_backward(const SwkPool *p, const float *dy, float *dx) {
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      Window win = pool_window(p, oh, ow);
      float g = dy[oh * p->wo + ow] / win.area;
      for (int ih = win.h0; ih < win.h1; ih++)
        for (int iw = win.w0; iw < win.w1; iw++) dx[ih * p->w + iw] += g;
    }
}

void swk_pool_forward(const SwkPool *p, int batch, const float *x, float *y, int32_t *argmax) {
  size_t in = (size_t)p->h * p->w, out = (size_t)p->ho * p->wo;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; i++) {
    if (p->max)
      max_plane(p, x + i * in, y + i * out, argmax + i * out);
    else
      avg_plane(p, x + i * in, y + i * out);
  }
}

void swk_pool_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                       float *dx, bool dx_add) {
  size_t in = (size_t)p->h * p->w, out = (size_t)p->ho * p->wo;
  int64_t planes = (int64_t)batch * p->c;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < planes; i++) {
    float *dxp = dx + i * in;
    const float *dyp = dy + i * out;
    if (!dx_add) memset(dxp, 0, sizeof(float) * in);
    if (!p->max) {
      avg_plane_backward(p, dyp, dxp);
      continue;
    }
    const int32_t *am = argmax + i * out;
    for (size_t j = 0; j < out; j++) dxp[am[j]] += dyp[j];
  }
}
