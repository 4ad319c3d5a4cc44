/* Hyperbolic tangent: dx = dy * (1 - y^2). */
#include <math.h>

#include "kernels.h"

void swk_tanh_forward(const SwkAct *p, int batch, const float *x, float *y) {
  int64_t n = p->n * batch;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

void swk_tanh_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx,
                       bool dx_add) {
  int64_t n = p->n * batch;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float g = dy[i] * (1.0f - y[i] * y[i]);
    dx[i] = dx_add ? dx[i] + g : g;
  }
}
