/* Softmax over the channels at each pixel (kernels.h): an image per task. */
#include <math.h>
#include <string.h>

#include "kernels.h"

static void softmax_pixel(int c, int64_t stride, const float *x, float *y) {
  float top = x[0];
  for (int k = 1; k < c; k++) top = fmaxf(top, x[k * stride]);
  double sum = 0;
  for (int k = 0; k < c; k++) sum += y[k * stride] = expf(x[k * stride] - top);
  float scale = (float)(1 / sum);
  for (int k = 0; k < c; k++) y[k * stride] *= scale;
}

void swk_softmax_forward(const SwkSoftmax *p, int batch, const float *x, float *y) {
  size_t image = (size_t)p->c * (size_t)p->inner;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int64_t i = 0; i < p->inner; i++)
      softmax_pixel(p->c, p->inner, x + n * image + i, y + n * image + i);
}

void swk_softmax_backward(const SwkSoftmax *p, int batch, const float *y, const float *dy,
                          float *dx, bool dx_add) {
  size_t image = (size_t)p->c * (size_t)p->inner;
  int64_t s = p->inner;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int64_t i = 0; i < s; i++) {
      const float *yi = y + n * image + i, *dyi = dy + n * image + i;
      float *dxi = dx + n * image + i;
      double dot = 0;
      for (int k = 0; k < p->c; k++) dot += (double)dyi[k * s] * yi[k * s];
      for (int k = 0; k < p->c; k++) {
        float g = yi[k * s] * (dyi[k * s] - (float)dot);
        dxi[k * s] = dx_add ? dxi[k * s] + g : g;
      }
    }
}
