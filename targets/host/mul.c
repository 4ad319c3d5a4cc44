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

/* The blocked layout (B, N/16, R, C, 16): a thread takes (image, block) planes of hw pixels of
 * 16 lanes. The lanes past c hold whatever their producer left (never read as values): the
 * products there are replaced by 0, not computed as x x 0, which a NaN would survive. */
enum { LANES = 16 };

/* The scale of plane p's lanes, 0 past the channels: per channel from s (batch, c), or for a
 * same-shaped s NULL (the caller reads s's plane itself). */
static void lane_scales(int c, int blocks, long p, int64_t s_hw, const float *s, float k[LANES],
                        bool valid[LANES]) {
  long n = p / blocks;
  int first = (int)(p % blocks) * LANES;
  for (int l = 0; l < LANES; l++) {
    valid[l] = first + l < c;
    k[l] = valid[l] && s_hw == 1 ? s[n * c + first + l] : 0;
  }
}

/* out = in x scale where valid, else 0 (or out += that, when add): scale per lane (step 0) or
 * per element (step 1, scale being the plane of a same-shaped s). */
static void scale_plane(int64_t hw, const float *in, const float *scale, int64_t step,
                        const bool valid[LANES], bool add, float *out) {
  for (int64_t q = 0; q < hw; q++) {
    const float *a = in + q * LANES, *b = scale + q * LANES * step;
    float *o = out + q * LANES;
#pragma omp simd
    for (int l = 0; l < LANES; l++) {
      float v = valid[l] ? a[l] * b[l] : 0.0f;
      o[l] = add ? o[l] + v : v;
    }
  }
}

void swk_mul_bnrc16_forward(int c, int64_t hw, int64_t s_hw, int batch, const float *x,
                            const float *s, float *y) {
  int blocks = (c + LANES - 1) / LANES;
  long planes = (long)batch * blocks;
  size_t plane = (size_t)hw * LANES;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long p = 0; p < planes; p++) {
    float k[LANES];
    bool valid[LANES];
    lane_scales(c, blocks, p, s_hw, s, k, valid);
    bool per_channel = s_hw == 1;
    scale_plane(hw, x + p * plane, per_channel ? k : s + p * plane, per_channel ? 0 : 1, valid,
                false, y + p * plane);
  }
}

void swk_mul_bnrc16_backward(int c, int64_t hw, int64_t s_hw, int batch, const float *x,
                             const float *s, const float *dy, float *dx, bool dx_add, float *ds,
                             bool ds_add) {
  int blocks = (c + LANES - 1) / LANES;
  long planes = (long)batch * blocks;
  size_t plane = (size_t)hw * LANES;
  bool per_channel = s_hw == 1;
#pragma omp parallel for schedule(static) num_threads(swk_threads())
  for (long p = 0; p < planes; p++) {
    float k[LANES];
    bool valid[LANES];
    lane_scales(c, blocks, p, s_hw, s, k, valid);
    const float *in = x + p * plane, *g = dy + p * plane;
    if (ds && per_channel) { /* each lane's sum over the pixels, in pixel order */
      double sum[LANES] = {0};
      for (int64_t q = 0; q < hw; q++)
        for (int l = 0; l < LANES; l++) sum[l] += (double)g[q * LANES + l] * in[q * LANES + l];
      long n = p / blocks;
      int first = (int)(p % blocks) * LANES;
      for (int l = 0; l < LANES && first + l < c; l++) {
        float *d = ds + n * c + first + l;
        *d = ds_add ? *d + (float)sum[l] : (float)sum[l];
      }
    } else if (ds) {
      scale_plane(hw, g, in, 1, valid, ds_add, ds + p * plane);
    }
    if (dx)
      scale_plane(hw, g, per_channel ? k : s + p * plane, per_channel ? 0 : 1, valid, dx_add,
                  dx + p * plane);
  }
}
