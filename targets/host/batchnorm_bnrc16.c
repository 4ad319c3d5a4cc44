/* Batch normalisation on the channel-blocked layout (B,N/16,R,C,16), with batchnorm.c's
 * semantics (biased variance to normalise, unbiased for the running average; sums in double):
 * a block's 16 channels are the 16 lanes of every pixel, so one pass over a block's pixels sums
 * its 16 channels at once, the pixels dealt in order to four sets of lane sums (independent
 * adds: memory speed, not the latency of one chain), added in order at the end. Threads take
 * the blocks as they finish (balance.h), so results do not depend on their number. The unused lanes of the last block get
 * y = 0 and dx = 0. */
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "stream.h"

enum { LANES = 16, SETS = 4 };

/* Per set, a block's 16 lane sums as two vectors of 8 doubles. */
typedef float Float8 __attribute__((vector_size(32)));
typedef double Double8 __attribute__((vector_size(64)));

typedef struct Sums {
  Double8 v[SETS][2];
} Sums;

static void total(const Sums *s, double out[LANES]) {
  for (int l = 0; l < LANES; l++) {
    out[l] = 0;
    for (int k = 0; k < SETS; k++) out[l] += s->v[k][l / 8][l % 8];
  }
}

static int blocks(const SwkBatchNorm *p) { return (p->c + LANES - 1) / LANES; }

/* Block ob's plane of image n: hw pixels of 16 lanes. */
static size_t plane_at(const SwkBatchNorm *p, int n, int ob) {
  return ((size_t)n * (size_t)blocks(p) + (size_t)ob) * (size_t)p->hw * LANES;
}

/* The sums over a plane's `hw` pixels, pixel q into set q % SETS, in vectors of 8 lanes (a
 * block is two): the statistics' sums of d = x - shift and of d * d, or the backward's sums of
 * dy * xhat, xhat = (x - m) * invstd, and of dy. Indexed by q % SETS the sets went through memory
 * on every pixel and the backward's sums took two thirds of its time; as vectors unrolled over
 * the sets they stay in registers. */
static inline Float8 load8(const float *p) {
  Float8 v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline Double8 widen(Float8 v) { return __builtin_convertvector(v, Double8); }

static void statistics_pixel(const float *x, const Double8 shift[2], Double8 s[2], Double8 sq[2]) {
  for (int h = 0; h < 2; h++) {
    Double8 d = widen(load8(x + 8 * h)) - shift[h];
    s[h] += d, sq[h] += d * d;
  }
}

static void add_statistics(const float *x, int hw, const double shift[LANES], Sums *sum,
                           Sums *squares) {
  Sums s = *sum, sq = *squares; /* in registers while the plane is summed */
  Double8 c[2];
  memcpy(c, shift, sizeof c);
  int q = 0;
  for (; q + SETS <= hw; q += SETS)
#pragma GCC unroll 4
    for (int k = 0; k < SETS; k++) statistics_pixel(x + (q + k) * LANES, c, s.v[k], sq.v[k]);
  for (; q < hw; q++) statistics_pixel(x + q * LANES, c, s.v[q % SETS], sq.v[q % SETS]);
  *sum = s, *squares = sq;
}

static void gradient_sums_pixel(const float *x, const float *dy, const Float8 m[2],
                                const Float8 invstd[2], Double8 s[2], Double8 sdy[2]) {
  for (int h = 0; h < 2; h++) {
    Double8 g = widen(load8(dy + 8 * h));
    s[h] += g * widen((load8(x + 8 * h) - m[h]) * invstd[h]);
    sdy[h] += g;
  }
}

static void add_gradient_sums(const float *x, const float *dy, int hw, const float mean[LANES],
                              const float invstd[LANES], Sums *dy_xhat, Sums *sum_dy) {
  Sums s = *dy_xhat, sdy = *sum_dy;
  Float8 m[2], inv[2];
  memcpy(m, mean, sizeof m), memcpy(inv, invstd, sizeof inv);
  int q = 0;
  for (; q + SETS <= hw; q += SETS)
#pragma GCC unroll 4
    for (int k = 0; k < SETS; k++) {
      size_t i = (size_t)(q + k) * LANES;
      gradient_sums_pixel(x + i, dy + i, m, inv, s.v[k], sdy.v[k]);
    }
  for (; q < hw; q++) {
    size_t i = (size_t)q * LANES;
    gradient_sums_pixel(x + i, dy + i, m, inv, s.v[q % SETS], sdy.v[q % SETS]);
  }
  *dy_xhat = s, *sum_dy = sdy;
}

/* The batch's mean and 1/std of block ob's channels (lanes); saves them and updates the running
 * statistics of the channels that exist. One pass over x: the sums of d = x - shift and d * d,
 * shift a value of the channel (its first), give the mean shift + sum d / count and the
 * variance (sum d^2 - (sum d)^2 / count) / count without the cancellation the same sums of x
 * would suffer where the mean is large against the spread (a second pass over x, for the
 * squares about the mean, was a quarter of the forward's memory traffic). */
static void block_statistics(const SwkBatchNorm *p, int batch, const float *x, int ob, float *saved,
                             float *running, float mean[LANES], float invstd[LANES]) {
  double count = (double)batch * p->hw, sum[LANES], squares[LANES], shift[LANES];
  const float *first = x + plane_at(p, 0, ob);
  for (int l = 0; l < LANES; l++) shift[l] = first[l];
  Sums s = {0}, ss = {0};
  for (int n = 0; n < batch; n++) add_statistics(x + plane_at(p, n, ob), p->hw, shift, &s, &ss);
  total(&s, sum), total(&ss, squares);
  for (int l = 0; l < LANES; l++) {
    int c = ob * LANES + l;
    double deviations = squares[l] - sum[l] * sum[l] / count; /* about the mean */
    if (deviations < 0) deviations = 0;
    double m = shift[l] + sum[l] / count, var = deviations / count;
    double unbiased = count > 1 ? deviations / (count - 1) : var;
    mean[l] = (float)m, invstd[l] = (float)(1.0 / sqrt(var + p->eps));
    if (c >= p->c) continue;
    saved[c] = mean[l], saved[p->c + c] = invstd[l];
    running[c] = p->momentum * running[c] + (1 - p->momentum) * (float)m;
    running[p->c + c] = p->momentum * running[p->c + c] + (1 - p->momentum) * (float)unbiased;
  }
}

/* Per-lane coefficients of a pass that writes a plane from x (and dy): the forward's
 * out = (x - m) * a + b, then the ReLU if asked; or the input gradient's
 * out = k * (dy - mdy - (x - m) * a * mdyx), added to what is there if asked. */
typedef struct Coefficients {
  float m[LANES], a[LANES], b[LANES], k[LANES], mdy[LANES], mdyx[LANES];
  bool relu, add;
  float slope, ceiling; /* ceiling: ReLU6's 6, or infinity */
} Coefficients;

/* The forward's `pixels` pixels of a plane (the ReLU kernel's expression: v > 0 ? v : slope *
 * v, then capped at the ceiling). */
static void normalise_pixels(const Coefficients *c, const float *restrict in, const float *dy,
                             float *restrict out, int pixels) {
  (void)dy;
  const Coefficients k = *c; /* in registers, not reloaded after each store through out */
  for (int q = 0; q < pixels; q++)
    for (int l = 0; l < LANES; l++) {
      float v = (in[(size_t)q * LANES + l] - k.m[l]) * k.a[l] + k.b[l];
      v = k.relu && !(v > 0) ? k.slope * v : v;
      out[(size_t)q * LANES + l] = v > k.ceiling ? k.ceiling : v;
    }
}

/* The input gradient's `pixels` pixels of a plane. */
static void gradient_pixels(const Coefficients *c, const float *restrict x,
                            const float *restrict dy, float *restrict out, int pixels) {
  const Coefficients k = *c;
  for (int q = 0; q < pixels; q++)
    for (int l = 0; l < LANES; l++) {
      size_t i = (size_t)q * LANES + (size_t)l;
      float xhat = (x[i] - k.m[l]) * k.a[l];
      float v = k.k[l] * (dy[i] - k.mdy[l] - xhat * k.mdyx[l]);
      out[i] = k.add ? out[i] + v : v;
    }
}

typedef void PixelPass(const Coefficients *c, const float *x, const float *dy, float *out,
                       int pixels);

enum { RUN = 64 }; /* pixels computed in L1 before they are streamed out (4 KB) */

/* Block ob's planes of `out` by `pass` from x's (and dy's). An output too large to stay in cache
 * (and not added to) is streamed out a run at a time (stream.h): a plain store would first read
 * each line from memory (res2's input gradients: half of the batch norm's backward). */
static void write_planes(const SwkBatchNorm *p, int batch, int ob, PixelPass *pass,
                         const Coefficients *c, const float *x, const float *dy, float *out) {
  bool stream = !c->add && host_streams(out, sizeof(float) * plane_at(p, batch, 0));
  for (int n = 0; n < batch; n++) {
    size_t at = plane_at(p, n, ob);
    const float *g = dy ? dy + at : NULL;
    if (!stream) {
      pass(c, x + at, g, out + at, p->hw);
      continue;
    }
    for (int q = 0; q < p->hw; q += RUN) {
      float run[RUN * LANES] __attribute__((aligned(64)));
      int pixels = p->hw - q < RUN ? p->hw - q : RUN;
      size_t o = (size_t)q * LANES;
      pass(c, x + at + o, g ? g + o : NULL, run, pixels);
      host_stream_copy(out + at + o, run, (size_t)pixels * LANES);
    }
  }
  if (stream) host_stream_fence();
}

/* y = (x - mean) * invstd * scale + shift over block ob, then the ReLU if p->relu; 0 in its
 * unused lanes. */
static void normalise(const SwkBatchNorm *p, int batch, const float *x, const float *scale,
                      const float *shift, int ob, const float mean[LANES],
                      const float invstd[LANES], float *y) {
  Coefficients c = {.relu = p->relu,
                    .slope = p->relu_slope,
                    .ceiling = p->relu && p->relu_ceiling > 0 ? p->relu_ceiling : INFINITY};
  for (int l = 0; l < LANES; l++) {
    int ch = ob * LANES + l;
    bool used = ch < p->c;
    c.a[l] = !used ? 0 : p->affine ? scale[ch] * invstd[l] : invstd[l];
    c.b[l] = used && p->affine ? shift[ch] : 0, c.m[l] = used ? mean[l] : 0;
  }
  write_planes(p, batch, ob, normalise_pixels, &c, x, NULL, y);
}

void swk_batchnorm_bnrc16_forward(const SwkBatchNorm *p, int batch, bool train, const float *x,
                                  const float *scale, const float *shift, float *y, float *saved,
                                  float *running) {
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int ob = 0; ob < blocks(p); ob++) {
    float mean[LANES] = {0}, invstd[LANES] = {0};
    if (train && !p->frozen) {
      block_statistics(p, batch, x, ob, saved, running, mean, invstd);
    } else {
      for (int l = 0; l < LANES && ob * LANES + l < p->c; l++) {
        int c = ob * LANES + l;
        mean[l] = running[c], invstd[l] = 1.0f / sqrtf(running[p->c + c] + p->eps);
        if (train) saved[c] = mean[l], saved[p->c + c] = invstd[l]; /* frozen: for backward */
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
    float mean[LANES] = {0}, invstd[LANES] = {0};
    for (int l = 0; l < LANES && ob * LANES + l < p->c; l++)
      mean[l] = saved[ob * LANES + l], invstd[l] = saved[p->c + ob * LANES + l];
    Sums dys = {0}, dyxs = {0};
    for (int n = 0; n < batch; n++)
      add_gradient_sums(x + plane_at(p, n, ob), dy + plane_at(p, n, ob), p->hw, mean, invstd, &dyxs,
                        &dys);
    double sum_dy[LANES], sum_dy_xhat[LANES];
    total(&dys, sum_dy), total(&dyxs, sum_dy_xhat);
    Coefficients k = {.add = dx_add};
    for (int l = 0; l < LANES; l++) {
      int c = ob * LANES + l;
      bool used = c < p->c;
      if (used && p->affine) {
        dscale[c] = swk_gradient_store(dscale[c], (float)sum_dy_xhat[l], grad_scale, grad_keep);
        dshift[c] = swk_gradient_store(dshift[c], (float)sum_dy[l], bias_grad_scale, grad_keep);
      }
      float gamma = used && p->affine ? scale[c] : 1.0f;
      k.m[l] = mean[l], k.a[l] = invstd[l], k.k[l] = used ? gamma * invstd[l] : 0;
      k.mdy[l] = p->frozen ? 0 : (float)(sum_dy[l] / count); /* frozen: constants */
      k.mdyx[l] = p->frozen ? 0 : (float)(sum_dy_xhat[l] / count);
    }
    if (dx) write_planes(p, batch, ob, gradient_pixels, &k, x, dy, dx);
  }
}
