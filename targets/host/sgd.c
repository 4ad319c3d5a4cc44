/* Caffe's SGD step with momentum and L2 weight decay. */
#include "kernels.h"

void swk_sgd_update(int64_t n, float lr, float decay, float momentum, float *w, const float *g, float *v) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    v[i] = momentum * v[i] + lr * (g[i] + decay * w[i]);
    w[i] -= v[i];
  }
}
