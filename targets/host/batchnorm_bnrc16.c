/* Batch normalisation on the channel-blocked layout (B,N/16,R,C,16), with batchnorm.c's
 * semantics (biased variance to normalise, unbiased for the running average; sums in double):
 * a block's 16 channels are the 16 lanes of every pixel, so one pass over a block's pixels sums
 * its 16 channels at once, the pixels dealt in order to four sets of lane sums (independent
 * adds: memory speed, not the latency of one chain), added in order at the end. Threads take
 * the blocks as they finish (balance.h), so results do not depend on their number. The unused lanes of the last block get
 * y = 0 and dx = 0. */
#include <math.h>

#include "kernels.h"
#include "stream.h"

enum { LANES = 16, SETS = 4 };

typedef struct Sums {
  double v[SETS][LANES];
} Sums;

static void total(const Sums *s, double out[LANES]) {
  for (int l = 0; l < LANES; l++) {
    out[l] = 0;
    for (int k = 0; k < SETS; k++) out[l] += s->v[k][l];
  }
}

static int blocks(const SwkBatchNorm *p) { return (p->c + LANES - 1) / LANES; }

/* Block ob's plane of image n: hw pixels of 16 lanes. */
static size_t plane_at(const SwkBatchNorm *p, int n, int ob) {
  return ((size_t)n * (size_t)blocks(p) + (size_t)ob) * (size_t)p->hw * LANES;
}

/* The batch's mean and 1/std of block ob's channels (lanes); saves them and updates the running
 * statistics of the channels that exist. */
static void block_statistics(const SwkBatchNorm *p, int batch, const float *x, int ob, float *saved,
                             float *running, float mean[LANES], float invstd[LANES]) {
  double count = (double)batch * p->hw, sum[LANES], squares[LANES];
  Sums s = {0}, ss = {0};
  for (int n = 0; n < batch; n++) {
    const float *in = x + plane_at(p, n, ob);
    for (int q = 0; q < p->hw; q++)
      for (int l = 0; l < LANES; l++) s.v[q % SETS][l] += in[(size_t)q * LANES + l];
  }
  total(&s, sum);
  for (int n = 0; n < batch; n++) {
    const float *in = x + plane_at(p, n, ob);
    for (int q = 0; q < p->hw; q++)
      for (int l = 0; l < LANES; l++) {
        double d = in[(size_t)q * LANES + l] - sum[l] / count;
        ss.v[q % SETS][l] += d * d;
      }
  }
  total(&ss, squares);
  for (int l = 0; l < LANES; l++) {
    int c = ob * LANES + l;
    double m = sum[l] / count, var = squares[l] / count;
    double unbiased = count > 1 ? squares[l] / (count - 1) : var;
    mean[l] = (float)m, invstd[l] = (float)(1.0 / sqrt(var + p->eps));
    if (c >= p->c) continue;
    saved[c] = mean[l], saved[p->c + c] = invstd[l];
    running[c] = p->momentum * running[c] + (1 - p->momentum) * (float)m;
    running[p->c + c] = p->momentum * running[p->c + c] + (1 - p->momentum) * (float)unbiased;
  }
}

/* out = (in - m) * a + b over `pixels` pixels of a plane, then the ReLU if asked (the ReLU
 * kernel's expression: v > 0 ? v : slope * v). */
static void normalise_pixels(const float *in, float *out, int pixels, const float m[LANES],
                             const float a[LANES], const float b[LANES], bool relu, float slope) {
  for (int q = 0; q < pixels; q++)
    for (int l = 0; l < LANES; l++) {
      float v = (in[(size_t)q * LANES + l] - m[l]) * a[l] + b[l];
      out[(size_t)q * LANES + l] = relu && !(v > 0) ? slope * v : v;
    }
}

enum { RUN = 64 }; /* pixels normalised in L1 before they are streamed out (4 KB) */

/* y = (x - mean) * invstd * scale + shift over block ob, then the ReLU if p->relu; 0 in its
 * unused lanes. A y too large to stay in cache is streamed out a run at a time (stream.h). */
static void normalise(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                      const float *shift, int ob, const float mean[LANES],
                      const float invstd[LANES], float *y) {
  float a[LANES], b[LANES], m[LANES];
  for (int l = 0; l < LANES; l++) {
    int c = ob * LANES + l;
    bool used = c < p->c;
    a[l] = !used ? 0 : p->affine ? scale[c] * invstd[l] : invstd[l];
    b[l] = used && p->affine ? shift[c] : 0, m[l] = used ? mean[l] : 0;
  }
  bool stream = host_streams(y, sizeof(float) * plane_at(p, batch, 0));
  for (int n = 0; n < batch; n++) {
    const float *in = x + plane_at(p, n, ob);
    float *out = y + plane_at(p, n, ob);
    if (!stream) {
      normalise_pixels(in, out, p->hw, m, a, b, p->relu, p->relu_slope);
      continue;
    }
    for (int q = 0; q < p->hw; q += RUN) {
      float run[RUN * LANES] __attribute__((aligned(64)));
      int pixels = p->hw - q < RUN ? p->hw - q : RUN;
      normalise_pixels(in + (size_t)q * LANES, run, pixels, m, a, b, p->relu, p->relu_slope);
      host_stream_copy(out + (size_t)q * LANES, run, (size_t)pixels * LANES);
    }
  }
  if (stream) host_stream_fence();
}

void swk_batchnorm_bnrc16_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                                  const float *scale, const float *shift, float *y, float *saved,
                                  float *running) {
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int ob = 0; ob < blocks(p); ob++) {
    float mean[LANES] = {0}, invstd[LANES] = {0};
    if (train) {
      block_statistics(p, batch, x, ob, saved, running, mean, invstd);
    } else {
      for (int l = 0; l < LANES && ob * LANES + l < p->c; l++) {
        int c = ob * LANES + l;
        mean[l] = running[c], invstd[l] = 1.0f / sqrtf(running[p->c + c] + p->eps);
      }
    }
    normalise(p, batch, x, scale, shift, ob, mean, invstd, y);
  }
}

void swk_batchnorm_bnrc16_recompute(const SwkBatchNorm *p, int batch, const float *x,
                                    const float *scale, const float *shift, const float *saved,
                                    float *y) {
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int ob = 0; ob < blocks(p); ob++) {
    float mean[LANES] = {0}, invstd[LANES] = {0};
    for (int l = 0; l < LANES && ob * LANES + l < p->c; l++)
      mean[l] = saved[ob * LANES + l], invstd[l] = saved[p->c + ob * LANES + l];
    normalise(p, batch, x, scale, shift, ob, mean, invstd, y);
  }
}

void swk_batchnorm_bnrc16_backward(const SwkBatchNorm *p, int batch, const float *x,
                                   const float *scale, const float *dy, const float *saved,
                                   float *dx, bool dx_add, float *dscale, float *dshift,
                                   float grad_scale, float bias_grad_scale, float grad_keep) {
  double count = (double)batch * p->hw;
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int ob = 0; ob < blocks(p); ob++) {
    float mean[LANES] = {0}, invstd[LANES] = {0}, k[LANES], mdy[LANES], mdyx[LANES];
    for (int l = 0; l < LANES && ob * LANES + l < p->c; l++)
      mean[l] = saved[ob * LANES + l], invstd[l] = saved[p->c + ob * LANES + l];
    Sums dys = {0}, dyxs = {0};
    for (int n = 0; n < batch; n++) {
      const float *xs = x + plane_at(p, n, ob), *g = dy + plane_at(p, n, ob);
      for (int q = 0; q < p->hw; q++)
        for (int l = 0; l < LANES; l++) {
          size_t i = (size_t)q * LANES + (size_t)l;
          dys.v[q % SETS][l] += g[i];
          dyxs.v[q % SETS][l] += (double)g[i] * ((xs[i] - mean[l]) * invstd[l]);
        }
    }
    double sum_dy[LANES], sum_dy_xhat[LANES];
    total(&dys, sum_dy), total(&dyxs, sum_dy_xhat);
    for (int l = 0; l < LANES; l++) {
      int c = ob * LANES + l;
      bool used = c < p->c;
      if (used && p->affine) {
        dscale[c] = swk_gradient_store(dscale[c], (float)sum_dy_xhat[l], grad_scale, grad_keep);
        dshift[c] = swk_gradient_store(dshift[c], (float)sum_dy[l], bias_grad_scale, grad_keep);
      }
      float gamma = used && p->affine ? scale[c] : 1.0f;
      k[l] = used ? gamma * invstd[l] : 0;
      mdy[l] = (float)(sum_dy[l] / count), mdyx[l] = (float)(sum_dy_xhat[l] / count);
    }
    if (!dx) continue;
    for (int n = 0; n < batch; n++) {
      const float *xs = x + plane_at(p, n, ob), *g = dy + plane_at(p, n, ob);
      float *d = dx + plane_at(p, n, ob);
      for (int q = 0; q < p->hw; q++)
        for (int l = 0; l < LANES; l++) {
          size_t i = (size_t)q * LANES + (size_t)l;
          float xhat = (xs[i] - mean[l]) * invstd[l];
          float v = k[l] * (g[i] - mdy[l] - xhat * mdyx[l]);
          d[i] = dx_add ? d[i] + v : v;
        }
    }
  }
}
