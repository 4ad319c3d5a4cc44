/* Caffe's SGD step with momentum and L2 weight decay. */
#include <math.h>

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

void swk_lars_update(int64_t n, float lr, float decay, float momentum, float trust, float *w,
                     const float *g, float *v) {
  double ww = 0, gg = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : ww, gg)
  for (int64_t i = 0; i < n; i++) {
    ww += (double)w[i] * w[i];
    gg += (double)g[i] * g[i];
  }
  swk_sgd_update(n, lr * swk_lars_ratio(trust, decay, sqrt(ww), sqrt(gg)), decay, momentum, w, g,
                 v);
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
