/* Logistic sigmoid: y = 1 / (1 + e^-x); dx = dy * y * (1 - y). */
#include <math.h>

#include "kernels.h"

void swk_sigmoid_forward(const SwkAct *p, int batch, const float *x, float *y) {
  int64_t n = p->n * batch;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
}

void swk_sigmoid_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx,
                          bool dx_add) {
  int64_t n = p->n * batch;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float g = dy[i] * y[i] * (1.0f - y[i]);
    dx[i] = dx_add ? dx[i] + g : g;
  }
}
