/* Implicit-GEMM convolution on the (R, C, N, B) layout (swDNN's plan): no im2col; for each
 * output pixel, Y[oh][ow] (co x B) += W[kh][kw] (co x ci) X[ih][iw] (ci x B) over the taps that
 * fall inside the image (padding by coordinate mapping). With the batch innermost, the batch is
 * the vector dimension: the micro-kernel keeps CB output channels x NV vectors of 8 images in
 * registers and streams input channels. Work is split over output rows (forward), input rows
 * (input gradient: a gather, so no two threads write one element) and (tap, channel) pairs
 * (weight gradient), so no thread shares an accumulator and results do not depend on the split. */
#include <string.h>

#include "kernels.h"

typedef float v8 __attribute__((vector_size(32)));
enum { VL = 8, NV = 2, CB = 4 }; /* vector length, vectors per block, channels per block */

static inline v8 load8(const float *p) {
  v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void store8(float *p, v8 v) { memcpy(p, &v, sizeof v); }
static inline v8 splat(float x) { return (v8){x, x, x, x, x, x, x, x}; }

/* Output taps [lo, hi) of a window start `start` over an extent `size` (coordinate mapping). */
static void tap_range(int start, int k, int size, int *lo, int *hi) {
  *lo = start < 0 ? -start : 0;
  *hi = start + k > size ? size - start : k;
}

/* One register block: CB output channels from `co` x NV vectors of images from `b0`. */
static void block_forward(const SwkConv *p, int batch, const float *x, const float *w, int oh, int ow, int co,
                          int b0, float *out, const float *bias) {
  v8 acc[CB][NV];
  for (int c = 0; c < CB; c++)
    for (int v = 0; v < NV; v++) acc[c][v] = splat(bias ? bias[co + c] : 0);
  int hs = oh * p->sh - p->ph, ws = ow * p->sw - p->pw, h0, h1, w0, w1;
  tap_range(hs, p->kh, p->h, &h0, &h1);
  tap_range(ws, p->kw, p->w, &w0, &w1);
  for (int kh = h0; kh < h1; kh++)
    for (int kw = w0; kw < w1; kw++) {
      const float *xp = x + ((size_t)(hs + kh) * p->w + (size_t)(ws + kw)) * p->ci * batch + b0;
      const float *wp = w + (((size_t)kh * p->kw + kw) * p->co + co) * p->ci;
      for (int ci = 0; ci < p->ci; ci++) {
        v8 xv[NV];
        for (int v = 0; v < NV; v++) xv[v] = load8(xp + (size_t)ci * batch + v * VL);
        for (int c = 0; c < CB; c++) {
          v8 wv = splat(wp[(size_t)c * p->ci + ci]);
          for (int v = 0; v < NV; v++) acc[c][v] += wv * xv[v];
        }
      }
    }
  for (int c = 0; c < CB; c++)
    for (int v = 0; v < NV; v++) store8(out + (size_t)(co + c) * batch + b0 + v * VL, acc[c][v]);
}

/* The same for the channels and images a block does not cover, one at a time. */
static void scalar_forward(const SwkConv *p, int batch, const float *x, const float *w, int oh, int ow, int co,
                           int b, float *out, const float *bias) {
  float acc = bias ? bias[co] : 0;
  int hs = oh * p->sh - p->ph, ws = ow * p->sw - p->pw, h0, h1, w0, w1;
  tap_range(hs, p->kh, p->h, &h0, &h1);
  tap_range(ws, p->kw, p->w, &w0, &w1);
  for (int kh = h0; kh < h1; kh++)
    for (int kw = w0; kw < w1; kw++) {
      const float *xp = x + ((size_t)(hs + kh) * p->w + (size_t)(ws + kw)) * p->ci * batch + b;
      const float *wp = w + (((size_t)kh * p->kw + kw) * p->co + co) * p->ci;
      for (int ci = 0; ci < p->ci; ci++) acc += wp[ci] * xp[(size_t)ci * batch];
    }
  out[(size_t)co * batch + b] = acc;
}

void swk_conv_implicit_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                               float *y) {
  int bfull = batch / (VL * NV) * (VL * NV), cfull = p->co / CB * CB;
#pragma omp parallel for schedule(static)
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      float *out = y + ((size_t)oh * p->wo + ow) * p->co * batch;
      const float *bias = p->bias ? b : NULL;
      for (int co = 0; co < cfull; co += CB)
        for (int b0 = 0; b0 < bfull; b0 += VL * NV) block_forward(p, batch, x, w, oh, ow, co, b0, out, bias);
      for (int co = 0; co < p->co; co++)
        for (int bi = co < cfull ? bfull : 0; bi < batch; bi++) scalar_forward(p, batch, x, w, oh, ow, co, bi, out, bias);
    }
}

/* ------------------------------------------------------------------ input gradient */

/* The output pixel whose tap k covers input position i, or -1. */
static int source_of(int i, int k, int stride, int pad, int out) {
  int t = i + pad - k;
  if (t < 0 || t % stride) return -1;
  t /= stride;
  return t < out ? t : -1;
}

static void dx_block(const SwkConv *p, int batch, const float *w, const float *dy, int ih, int iw, int ci,
                     int b0, v8 acc[CB][NV]) {
  for (int c = 0; c < CB; c++)
    for (int v = 0; v < NV; v++) acc[c][v] = splat(0);
  for (int kh = 0; kh < p->kh; kh++) {
    int oh = source_of(ih, kh, p->sh, p->ph, p->ho);
    if (oh < 0) continue;
    for (int kw = 0; kw < p->kw; kw++) {
      int ow = source_of(iw, kw, p->sw, p->pw, p->wo);
      if (ow < 0) continue;
      const float *dp = dy + ((size_t)oh * p->wo + ow) * p->co * batch + b0;
      const float *wp = w + ((size_t)kh * p->kw + kw) * p->co * p->ci + ci;
      for (int co = 0; co < p->co; co++) {
        v8 dv[NV];
        for (int v = 0; v < NV; v++) dv[v] = load8(dp + (size_t)co * batch + v * VL);
        for (int c = 0; c < CB; c++) {
          v8 wv = splat(wp[(size_t)co * p->ci + c]);
          for (int v = 0; v < NV; v++) acc[c][v] += wv * dv[v];
        }
      }
    }
  }
}

static float dx_scalar(const SwkConv *p, int batch, const float *w, const float *dy, int ih, int iw, int ci, int b) {
  float acc = 0;
  for (int kh = 0; kh < p->kh; kh++) {
    int oh = source_of(ih, kh, p->sh, p->ph, p->ho);
    if (oh < 0) continue;
    for (int kw = 0; kw < p->kw; kw++) {
      int ow = source_of(iw, kw, p->sw, p->pw, p->wo);
      if (ow < 0) continue;
      const float *dp = dy + ((size_t)oh * p->wo + ow) * p->co * batch + b;
      const float *wp = w + ((size_t)kh * p->kw + kw) * p->co * p->ci + ci;
      for (int co = 0; co < p->co; co++) acc += wp[(size_t)co * p->ci] * dp[(size_t)co * batch];
    }
  }
  return acc;
}

static void input_gradient(const SwkConv *p, int batch, const float *w, const float *dy, float *dx, bool dx_add) {
  int bfull = batch / (VL * NV) * (VL * NV), cfull = p->ci / CB * CB;
#pragma omp parallel for schedule(static)
  for (int ih = 0; ih < p->h; ih++)
    for (int iw = 0; iw < p->w; iw++) {
      float *out = dx + ((size_t)ih * p->w + iw) * p->ci * batch;
      for (int ci = 0; ci < cfull; ci += CB)
        for (int b0 = 0; b0 < bfull; b0 += VL * NV) {
          v8 acc[CB][NV];
          dx_block(p, batch, w, dy, ih, iw, ci, b0, acc);
          for (int c = 0; c < CB; c++)
            for (int v = 0; v < NV; v++) {
              float *o = out + (size_t)(ci + c) * batch + b0 + v * VL;
              store8(o, dx_add ? load8(o) + acc[c][v] : acc[c][v]);
            }
        }
      for (int ci = 0; ci < p->ci; ci++)
        for (int b = ci < cfull ? bfull : 0; b < batch; b++) {
          float g = dx_scalar(p, batch, w, dy, ih, iw, ci, b);
          float *o = out + (size_t)ci * batch + b;
          *o = dx_add ? *o + g : g;
        }
    }
}

/* ------------------------------------------------------------------ weight gradient */

static float horizontal_sum(v8 v) {
  float s = 0;
  for (int i = 0; i < VL; i++) s += v[i];
  return s;
}

/* dw[kh][kw][co][ci .. ci+CB) = sum over output pixels and images of dy[co] * x[ci]. */
static void weight_block(const SwkConv *p, int batch, const float *x, const float *dy, int kh, int kw, int co, int ci,
                         int nc, float *dw) {
  v8 acc[CB];
  float tail[CB] = {0};
  for (int c = 0; c < CB; c++) acc[c] = splat(0);
  int bvec = batch / VL * VL;
  for (int oh = 0; oh < p->ho; oh++) {
    int ih = oh * p->sh - p->ph + kh;
    if (ih < 0 || ih >= p->h) continue;
    for (int ow = 0; ow < p->wo; ow++) {
      int iw = ow * p->sw - p->pw + kw;
      if (iw < 0 || iw >= p->w) continue;
      const float *dp = dy + (((size_t)oh * p->wo + ow) * p->co + co) * batch;
      const float *xp = x + (((size_t)ih * p->w + iw) * p->ci + ci) * batch;
      for (int b = 0; b < bvec; b += VL) {
        v8 d = load8(dp + b);
        for (int c = 0; c < nc; c++) acc[c] += d * load8(xp + (size_t)c * batch + b);
      }
      for (int b = bvec; b < batch; b++)
        for (int c = 0; c < nc; c++) tail[c] += dp[b] * xp[(size_t)c * batch + b];
    }
  }
  for (int c = 0; c < nc; c++) dw[c] = horizontal_sum(acc[c]) + tail[c];
}

static void weight_gradient(const SwkConv *p, int batch, const float *x, const float *dy, float *dw, float *db) {
  int pairs = p->kh * p->kw * p->co;
#pragma omp parallel for schedule(static)
  for (int pair = 0; pair < pairs; pair++) {
    int co = pair % p->co, tap = pair / p->co, kh = tap / p->kw, kw = tap % p->kw;
    float *row = dw + (size_t)pair * p->ci;
    for (int ci = 0; ci < p->ci; ci += CB)
      weight_block(p, batch, x, dy, kh, kw, co, ci, p->ci - ci < CB ? p->ci - ci : CB, row + ci);
  }
  if (!db || !p->bias) return;
#pragma omp parallel for schedule(static)
  for (int co = 0; co < p->co; co++) {
    double s = 0;
    for (int pix = 0; pix < p->ho * p->wo; pix++)
      for (int b = 0; b < batch; b++) s += dy[((size_t)pix * p->co + co) * batch + b];
    db[co] = (float)s;
  }
}

void swk_conv_implicit_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                                float *dx, bool dx_add, float *dw, float *db) {
  weight_gradient(p, batch, x, dy, dw, db);
  if (dx) input_gradient(p, batch, w, dy, dx, dx_add);
}

/* ------------------------------------------------------------------ layout transforms */

/* Element (n, c, i) of the (B,N,R,C) tensor is at (n * c_count + c) * hw + i; in (R,C,N,B) at
 * (i * c_count + c) * batch + n. Blocks of 8 images keep both sides' accesses short-strided. */
void swk_to_rcnb(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  int hw = h * w;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < hw; i++)
    for (int ch = 0; ch < c; ch++) {
      float *dst = y + ((size_t)i * c + ch) * batch;
      for (int n = 0; n < batch; n++) {
        float v = x[((size_t)n * c + ch) * hw + i];
        dst[n] = add ? dst[n] + v : v;
      }
    }
}

void swk_to_bnrc(int c, int h, int w, int batch, const float *x, float *y, bool add) {
  int hw = h * w;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++)
    for (int ch = 0; ch < c; ch++) {
      float *dst = y + ((size_t)n * c + ch) * hw;
      for (int i = 0; i < hw; i++) {
        float v = x[((size_t)i * c + ch) * batch + n];
        dst[i] = add ? dst[i] + v : v;
      }
    }
}
