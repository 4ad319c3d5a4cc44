/* x times s (B,N,R,C): s holds one value per image and channel, broadcast over the channel's
 * s_hw = 1 pixels (squeeze-and-excitation's scale), or x's own shape (s_hw = hw). Threads take
 * (image, channel) planes; each gradient element is written by one of them, a channel's sum
 * over its pixels in one order, so results do not depend on their number. */
#include "kernels.h"

void swk_mul_forward(int c, int64_t hw, int64_t s_hw, int batch, const float *x, const float *s,
                     float *y) {
  long planes = (long)batch * c;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long p = 0; p < planes; p++) {
    const float *in = x + p * hw, *scale = s + p * s_hw;
    float *out = y + p * hw;
    if (s_hw == 1) {
      float k = scale[0];
#pragma omp simd
      for (int64_t q = 0; q < hw; q++) out[q] = in[q] * k;
    } else {
#pragma omp simd
      for (int64_t q = 0; q < hw; q++) out[q] = in[q] * scale[q];
    }
  }
}

/* dx = dy s (written or added), ds = dy x summed over the pixels s is broadcast to (written or
 * added); either may be NULL. */
void swk_mul_backward(int c, int64_t hw, int64_t s_hw, int batch, const float *x, const float *s,
                      const float *dy, float *dx, bool dx_add, float *ds, bool ds_add) {
  long planes = (long)batch * c;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long p = 0; p < planes; p++) {
    const float *in = x + p * hw, *scale = s + p * s_hw, *g = dy + p * hw;
    if (ds && s_hw == 1) {
      double sum = 0;
      for (int64_t q = 0; q < hw; q++) sum += (double)g[q] * in[q];
      ds[p] = ds_add ? ds[p] + (float)sum : (float)sum;
    } else if (ds) {
      float *d = ds + p * hw;
      for (int64_t q = 0; q < hw; q++) d[q] = ds_add ? d[q] + g[q] * in[q] : g[q] * in[q];
    }
    if (dx) {
      float *d = dx + p * hw;
      int64_t step = s_hw == 1 ? 0 : 1; /* a broadcast scale stays at its one value */
      for (int64_t q = 0; q < hw; q++) {
        float v = g[q] * scale[q * step];
        d[q] = dx_add ? d[q] + v : v;
      }
    }
  }
}
