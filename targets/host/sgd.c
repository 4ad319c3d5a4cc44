/* Caffe's SGD step with momentum and L2 weight decay. */
#include "kernels.h"

void swk_sgd_update(int64_t n, float lr, float decay, float momentum, float *w, const float *g,
                    float *v) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    v[i] = momentum * v[i] + lr * (g[i] + decay * w[i]);
    w[i] -= v[i];
  }
}

void swk_sgd_apply(int64_t n, float lr, float decay, float *w, float *v) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    v[i] += lr * decay * w[i];
    w[i] -= v[i];
  }
}

void swk_easgd_elastic(int64_t n, float eta, float rho, int ranks, const float *w, const float *sum,
                       float *center, float *g) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; i++) {
    float c = center[i];
    g[i] += rho * (w[i] - c);
    center[i] = c + eta * rho * (sum[i] - (float)ranks * c);
  }
}
