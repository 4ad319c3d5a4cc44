/* ReLU (leaky with slope > 0): y = x > 0 ? x : slope * x. Backward reads y. */
#include "kernels.h"

void swk_relu_forward(const SwkAct *p, int batch, const float *x, float *y) {
  int64_t n = p->n * batch;
  float slope = p->slope;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : slope * x[i];
}

void swk_relu_backward(const SwkAct *p, int batch, const float *y, const float *dy, float *dx,
                       bool dx_add) {
  int64_t n = p->n * batch;
  float slope = p->slope;
  if (dx_add) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) dx[i] += y[i] > 0 ? dy[i] : slope * dy[i];
  } else {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; i++) dx[i] = y[i] > 0 ? dy[i] : slope * dy[i];
  }
}
