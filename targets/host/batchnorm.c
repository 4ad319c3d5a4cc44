/* Batch normalisation per channel over batch and pixels (PyTorch's and Caffe's convention:
 * biased variance to normalise, unbiased for the running average). Channels are spread over
 * threads; sums are in double so large batches do not lose the mean. */
#include <math.h>

#include "kernels.h"

#define AT(n, c, i) ((size_t)(n)*p->c * p->hw + (size_t)(c)*p->hw + (size_t)(i))

void swk_batchnorm_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                           const float *scale, const float *shift, float *y, float *saved,
                           float *running) {
  double count = (double)batch * p->hw;
#pragma omp parallel for schedule(static)
  for (int c = 0; c < p->c; c++) {
    float mean, invstd;
    if (train) {
      double s = 0, ss = 0;
      for (int n = 0; n < batch; n++)
        for (int i = 0; i < p->hw; i++) s += x[AT(n, c, i)];
      double m = s / count;
      for (int n = 0; n < batch; n++)
        for (int i = 0; i < p->hw; i++) {
          double d = x[AT(n, c, i)] - m;
          ss += d * d;
        }
      double var = ss / count;
      mean = (float)m;
      invstd = (float)(1.0 / sqrt(var + p->eps));
      saved[c] = mean;
      saved[p->c + c] = invstd;
      double unbiased = count > 1 ? ss / (count - 1) : var;
      running[c] = p->momentum * running[c] + (1 - p->momentum) * (float)m;
      running[p->c + c] = p->momentum * running[p->c + c] + (1 - p->momentum) * (float)unbiased;
    } else {
      mean = running[c];
      invstd = 1.0f / sqrtf(running[p->c + c] + p->eps);
    }
    float a = p->affine ? scale[c] * invstd : invstd, b = p->affine ? shift[c] : 0;
    for (int n = 0; n < batch; n++)
      for (int i = 0; i < p->hw; i++) y[AT(n, c, i)] = (x[AT(n, c, i)] - mean) * a + b;
  }
}

void swk_batchnorm_backward(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                            const float *dy, const float *saved, float *dx, bool dx_add,
                            float *dscale, float *dshift) {
  double count = (double)batch * p->hw;
#pragma omp parallel for schedule(static)
  for (int c = 0; c < p->c; c++) {
    float mean = saved[c], invstd = saved[p->c + c];
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int n = 0; n < batch; n++)
      for (int i = 0; i < p->hw; i++) {
        float g = dy[AT(n, c, i)];
        sum_dy += g;
        sum_dy_xhat += g * (x[AT(n, c, i)] - mean) * invstd;
      }
    if (p->affine) {
      dscale[c] = (float)sum_dy_xhat;
      dshift[c] = (float)sum_dy;
    }
    if (!dx) continue;
    float gamma = p->affine ? scale[c] : 1.0f;
    float k = gamma * invstd, mdy = (float)(sum_dy / count), mdyx = (float)(sum_dy_xhat / count);
    for (int n = 0; n < batch; n++)
      for (int i = 0; i < p->hw; i++) {
        size_t at = AT(n, c, i);
        float xhat = (x[at] - mean) * invstd;
        float g = k * (dy[at] - mdy - xhat * mdyx);
        dx[at] = dx_add ? dx[at] + g : g;
      }
  }
}
