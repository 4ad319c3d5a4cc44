/* A per-channel bias on (B,N,R,C) and its gradient, for the transposed convolution (whose
 * convolution kernels, run with their roles swapped, have the bias on the wrong side). Threads
 * take channels for the gradient: each sums its channel over images and pixels in one order, so
 * results do not depend on their number. */
#include "kernels.h"

void swk_channel_bias_forward(int c, int64_t hw, int batch, const float *b, float *y) {
  long planes = (long)batch * c;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long p = 0; p < planes; p++) {
    float k = b[p % c], *out = y + p * hw;
#pragma omp simd
    for (int64_t q = 0; q < hw; q++) out[q] += k;
  }
}

void swk_channel_bias_backward(int c, int64_t hw, int batch, const float *dy, float *db,
                               float scale, float keep) {
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (int k = 0; k < c; k++) {
    double sum = 0;
    for (int n = 0; n < batch; n++) {
      const float *g = dy + ((int64_t)n * c + k) * hw;
      for (int64_t q = 0; q < hw; q++) sum += g[q];
    }
    db[k] = swk_gradient_store(db[k], (float)sum, scale, keep);
  }
}
