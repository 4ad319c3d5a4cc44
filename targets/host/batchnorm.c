/* Batch normalisation per channel over batch and pixels (PyTorch's and Caffe's convention:
 * biased variance to normalise, unbiased for the running average). Channels are spread over
 * threads; sums are in double so large batches do not lose the mean, in vector lanes
 * (runtime/lanes.h) so that they run at memory speed. A channel's data (batch runs of hw
 * floats) is read by the statistics and again by the normalisation while it is in cache. */
#include <math.h>

#include "kernels.h"
#include "lanes.h"

/* Channel c's run of image n. */
static size_t run_at(const SwkBatchNorm *p, int n, int c) {
  return ((size_t)n * (size_t)p->c + (size_t)c) * (size_t)p->hw;
}

/* The batch's mean and 1/std of channel c; saves them and updates the running statistics. */
static void batch_statistics(const SwkBatchNorm *p, int batch, const float *x, int c, float *saved,
                             float *running, float *mean, float *invstd) {
  double count = (double)batch * p->hw;
  SwkLanes s = {0}, ss = {0};
  for (int n = 0; n < batch; n++) swk_lanes_add(&s, x + run_at(p, n, c), p->hw);
  double m = swk_lanes_total(&s) / count;
  for (int n = 0; n < batch; n++) swk_lanes_add_squares(&ss, x + run_at(p, n, c), p->hw, m);
  double squares = swk_lanes_total(&ss), var = squares / count;
  double unbiased = count > 1 ? squares / (count - 1) : var;
  *mean = (float)m;
  *invstd = (float)(1.0 / sqrt(var + p->eps));
  saved[c] = *mean;
  saved[p->c + c] = *invstd;
  running[c] = p->momentum * running[c] + (1 - p->momentum) * (float)m;
  running[p->c + c] = p->momentum * running[p->c + c] + (1 - p->momentum) * (float)unbiased;
}

/* y = (x - mean) * invstd * scale + shift over channel c, then the ReLU if p->relu (the ReLU
 * kernel's expression), capped at relu_ceiling if that is set (ReLU6). */
static void normalise(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                      const float *shift, int c, float mean, float invstd, float *y) {
  float a = p->affine ? scale[c] * invstd : invstd, b = p->affine ? shift[c] : 0;
  bool relu = p->relu;
  float slope = p->relu_slope,
        ceiling = p->relu && p->relu_ceiling > 0 ? p->relu_ceiling : INFINITY;
  for (int n = 0; n < batch; n++) {
    const float *in = x + run_at(p, n, c);
    float *out = y + run_at(p, n, c);
    for (int i = 0; i < p->hw; i++) {
      float v = (in[i] - mean) * a + b;
      v = relu && !(v > 0) ? slope * v : v;
      out[i] = v > ceiling ? ceiling : v;
    }
  }
}

void swk_batchnorm_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                           const float *scale, const float *shift, float *y, float *saved,
                           float *running) {
#pragma omp parallel for schedule(guided)
  for (int c = 0; c < p->c; c++) {
    float mean, invstd;
    if (train && !p->frozen) {
      batch_statistics(p, batch, x, c, saved, running, &mean, &invstd);
    } else {
      mean = running[c];
      invstd = 1.0f / sqrtf(running[p->c + c] + p->eps);
      if (train) saved[c] = mean, saved[p->c + c] = invstd; /* frozen: backward reads them */
    }
    normalise(p, batch, x, scale, shift, c, mean, invstd, y);
  }
}

void swk_batchnorm_recompute(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                             const float *shift, const float *saved, float *y) {
#pragma omp parallel for schedule(guided)
  for (int c = 0; c < p->c; c++)
    normalise(p, batch, x, scale, shift, c, saved[c], saved[p->c + c], y);
}

void swk_batchnorm_backward(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                            const float *dy, const float *saved, float *dx, bool dx_add,
                            float *dscale, float *dshift, float grad_scale, float bias_grad_scale,
                            float grad_keep) {
  double count = (double)batch * p->hw;
#pragma omp parallel for schedule(guided)
  for (int c = 0; c < p->c; c++) {
    float mean = saved[c], invstd = saved[p->c + c];
    SwkLanes dys = {0}, dyxs = {0};
    for (int n = 0; n < batch; n++)
      swk_lanes_add_products(&dys, &dyxs, dy + run_at(p, n, c), x + run_at(p, n, c), p->hw, mean,
                             invstd);
    double sum_dy = swk_lanes_total(&dys), sum_dy_xhat = swk_lanes_total(&dyxs);
    if (p->affine) {
      dscale[c] = swk_gradient_store(dscale[c], (float)sum_dy_xhat, grad_scale, grad_keep);
      dshift[c] = swk_gradient_store(dshift[c], (float)sum_dy, bias_grad_scale, grad_keep);
    }
    if (!dx) continue;
    float gamma = p->affine ? scale[c] : 1.0f;
    /* frozen statistics are constants: dx = gamma invstd dy */
    float k = gamma * invstd, mdy = p->frozen ? 0 : (float)(sum_dy / count),
          mdyx = p->frozen ? 0 : (float)(sum_dy_xhat / count);
    for (int n = 0; n < batch; n++) {
      size_t at = run_at(p, n, c);
      const float *xs = x + at, *g = dy + at;
      float *d = dx + at;
      for (int i = 0; i < p->hw; i++) {
        float xhat = (xs[i] - mean) * invstd;
        float v = k * (g[i] - mdy - xhat * mdyx);
        d[i] = dx_add ? d[i] + v : v;
      }
    }
  }
}
