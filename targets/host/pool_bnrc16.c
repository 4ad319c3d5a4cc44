/* Max and average pooling on the channel-blocked layout (B,N/16,R,C,16), with the semantics of
 * pool.c (Caffe's windows; the first maximum in window order wins; averages divide by the
 * window's extent in the padded input): each (image, block of 16 channels) is a plane whose
 * pixels hold 16 lanes, one vector. Threads take the planes as they finish (balance.h; each writes
 * only its own, forward and backward). The unused lanes of the last block are pooled too (they hold whatever the
 * producer left: convolutions write 0). */
#include <omp.h>
#include <string.h>

#include "kernels.h"
#include "pool_window.h"
#include "vec16.h"

enum { LANES = 16 };

static int planes(const SwkPool *p, int batch) { return batch * ((p->c + LANES - 1) / LANES); }

/* One output pixel's maximum and where it was, over the window's pixels [h0, h1) x [w0, w1) in
 * order, in native vectors (vec16.h: a 16-lane comparison without AVX-512 is 16 scalar ones).
 * Inlined where the window's extent is a constant, so that its loops unroll. */
static inline __attribute__((always_inline)) void
max_window(const SwkPool *p, SwnWindow s, const float *x, float *y, int32_t *argmax) {
  int32_t first = s.h0 * p->w + s.w0;
  HostVec best[HOST_VEC_PARTS];
  HostIVec at[HOST_VEC_PARTS];
  for (int v = 0; v < HOST_VEC_PARTS; v++) {
    best[v] = host_vec_load(x + (size_t)first * LANES + v * HOST_VEC_FLOATS);
    at[v] = (HostIVec){0} + first;
  }
  for (int ih = s.h0; ih < s.h1; ih++)
    for (int iw = s.w0; iw < s.w1; iw++) {
      int32_t here = ih * p->w + iw;
      for (int v = 0; v < HOST_VEC_PARTS; v++) {
        HostVec in = host_vec_load(x + (size_t)here * LANES + v * HOST_VEC_FLOATS);
        HostIVec greater = in > best[v]; /* all ones where greater */
        best[v] = (HostVec)(((HostIVec)in & greater) | ((HostIVec)best[v] & ~greater));
        at[v] = (((HostIVec){0} + here) & greater) | (at[v] & ~greater);
      }
    }
  for (int v = 0; v < HOST_VEC_PARTS; v++) {
    host_vec_store(y + v * HOST_VEC_FLOATS, best[v]);
    memcpy(argmax + v * HOST_VEC_FLOATS, &at[v], sizeof at[v]);
  }
}

/* A window of kh x kw pixels from (h0, w0), kh and kw constants where inlined. */
static inline __attribute__((always_inline)) SwnWindow full_window(SwnWindow s, const int kh,
                                                                   const int kw) {
  return (SwnWindow){s.h0, s.h0 + kh, s.w0, s.w0 + kw, s.area};
}

/* Windows of 2 x 2 and 3 x 3 pixels (LeNet's and AlexNet's, and any window clipped to those),
 * unrolled: the loops over a window's bounds took more time than its loads and comparisons. */
static void max_pixel(const SwkPool *p, SwnWindow s, const float *x, float *y, int32_t *argmax) {
  int kh = s.h1 - s.h0, kw = s.w1 - s.w0;
  if (kh == 2 && kw == 2)
    max_window(p, full_window(s, 2, 2), x, y, argmax);
  else if (kh == 3 && kw == 3)
    max_window(p, full_window(s, 3, 3), x, y, argmax);
  else
    max_window(p, s, x, y, argmax);
}

/* The sum is in native vectors too: a 16-float one carried across the loop kept half of it on
 * the stack without AVX-512, stored and reloaded per pixel. */
static void avg_pixel(const SwkPool *p, SwnWindow s, const float *x, float *y) {
  HostVec sum[HOST_VEC_PARTS] = {{0}};
  for (int ih = s.h0; ih < s.h1; ih++)
    for (int iw = s.w0; iw < s.w1; iw++)
      for (int v = 0; v < HOST_VEC_PARTS; v++)
        sum[v] += host_vec_load(x + ((size_t)ih * p->w + iw) * LANES + v * HOST_VEC_FLOATS);
  for (int v = 0; v < HOST_VEC_PARTS; v++) host_vec_store(y + v * HOST_VEC_FLOATS, sum[v] / s.area);
}

void swk_pool_bnrc16_forward(const SwkPool *p, int batch, const float *x, float *y,
                             int32_t *argmax) {
  size_t in = (size_t)p->h * (size_t)p->w * LANES, out = (size_t)p->ho * (size_t)p->wo * LANES;
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int k = 0; k < planes(p, batch); k++)
    for (int oh = 0; oh < p->ho; oh++)
      for (int ow = 0; ow < p->wo; ow++) {
        size_t o = (size_t)k * out + ((size_t)oh * (size_t)p->wo + (size_t)ow) * LANES;
        SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
        if (p->max)
          max_pixel(p, s, x + (size_t)k * in, y + o, argmax + o);
        else
          avg_pixel(p, s, x + (size_t)k * in, y + o);
      }
}

/* The outputs along one axis whose windows hold input i, [lo, hi), stepped from i - 1's (both
 * only grow with i): output o's window starts at o * stride - pad and holds k inputs. */
typedef struct Covering {
  int lo, hi;
} Covering;

static void cover_next(Covering *c, int i, int pad, int k, int stride, int outputs) {
  while (c->lo < outputs && c->lo * stride - pad + k <= i) c->lo++;
  while (c->hi < outputs && c->hi * stride - pad <= i) c->hi++;
}

/* Part v of an output's gradient that reaches input pixel `here`: dy where its maximum was. */
static inline HostVec max_gradient(const float *dy, const int32_t *argmax, int32_t here, int v) {
  HostIVec at;
  memcpy(&at, argmax + v * HOST_VEC_FLOATS, sizeof at);
  return (HostVec)((HostIVec)host_vec_load(dy + v * HOST_VEC_FLOATS) & (at == here));
}

/* One plane's max-pooling input gradient, written or added, pixel by pixel of dX: the sum of
 * the gradients of the outputs whose maximum was there, found among the outputs whose windows
 * hold the pixel (a lane at a time would scatter with scalar stores into a zeroed plane). */
static void max_backward_plane(const SwkPool *p, const float *dy, const int32_t *argmax, float *dx,
                               bool dx_add) {
  Covering rows = {0, 0};
  for (int ih = 0; ih < p->h; ih++) {
    cover_next(&rows, ih, p->ph, p->kh, p->sh, p->ho);
    Covering cols = {0, 0};
    for (int iw = 0; iw < p->w; iw++) {
      cover_next(&cols, iw, p->pw, p->kw, p->sw, p->wo);
      int32_t here = ih * p->w + iw;
      float *d = dx + (size_t)here * LANES;
      HostVec sum[HOST_VEC_PARTS];
      for (int v = 0; v < HOST_VEC_PARTS; v++)
        sum[v] = dx_add ? host_vec_load(d + v * HOST_VEC_FLOATS) : (HostVec){0};
      for (int oh = rows.lo; oh < rows.hi; oh++)
        for (int ow = cols.lo; ow < cols.hi; ow++) {
          size_t o = ((size_t)oh * (size_t)p->wo + (size_t)ow) * LANES;
          for (int v = 0; v < HOST_VEC_PARTS; v++)
            sum[v] += max_gradient(dy + o, argmax + o, here, v);
        }
      for (int v = 0; v < HOST_VEC_PARTS; v++) host_vec_store(d + v * HOST_VEC_FLOATS, sum[v]);
    }
  }
}

/* Whether the windows tile the input without overlapping (stride = window, no padding: LeNet's
 * 2 x 2): then each input pixel lies in one window at most, and the gradient can go window by
 * window instead of searching each pixel's covering outputs. */
static bool windows_tile(const SwkPool *p) {
  return p->sh == p->kh && p->sw == p->kw && !p->ph && !p->pw;
}

/* One input pixel's gradient from the one window holding it: dy where its maximum was there. */
static inline void max_backward_pixel(const float *dy, const int32_t *argmax, int32_t here,
                                      float *d, bool dx_add) {
  for (int v = 0; v < HOST_VEC_PARTS; v++) {
    HostVec g = max_gradient(dy, argmax, here, v);
    if (dx_add) g += host_vec_load(d + v * HOST_VEC_FLOATS);
    host_vec_store(d + v * HOST_VEC_FLOATS, g);
  }
}

/* max_backward_plane where the windows tile the input (windows_tile): output by output, the
 * pixels of its window; the pixels below or right of the last windows get none. */
static void max_backward_tiled(const SwkPool *p, const float *dy, const int32_t *argmax, float *dx,
                               bool dx_add) {
  for (int ih = 0; ih < p->h; ih++) {
    int oh = ih / p->sh, iw = 0;
    if (oh < p->ho)
      for (int ow = 0; ow < p->wo && iw < p->w; ow++) {
        size_t o = ((size_t)oh * (size_t)p->wo + (size_t)ow) * LANES;
        for (int end = iw + p->kw < p->w ? iw + p->kw : p->w; iw < end; iw++) {
          int32_t here = ih * p->w + iw;
          max_backward_pixel(dy + o, argmax + o, here, dx + (size_t)here * LANES, dx_add);
        }
      }
    if (!dx_add) /* outside every window */
      memset(dx + ((size_t)ih * p->w + iw) * LANES, 0, sizeof(float) * LANES * (size_t)(p->w - iw));
  }
}

/* One plane's average-pooling input gradient, written or added: each output's gradient spread
 * over its window. */
static void avg_backward_plane(const SwkPool *p, const float *dy, float *dx, bool dx_add) {
  if (!dx_add) memset(dx, 0, sizeof(float) * (size_t)p->h * (size_t)p->w * LANES);
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      size_t o = ((size_t)oh * (size_t)p->wo + (size_t)ow) * LANES;
      SwnWindow s = SWN_POOL_WINDOW(p, oh, ow);
      HostV16 share = host_v16_load(dy + o) / s.area;
      for (int ih = s.h0; ih < s.h1; ih++)
        for (int iw = s.w0; iw < s.w1; iw++) {
          float *d = dx + ((size_t)ih * p->w + iw) * LANES;
          HostV16 sum = host_v16_load(d) + share;
          host_v16_store(d, sum);
        }
    }
}

void swk_pool_bnrc16_backward(const SwkPool *p, int batch, const float *dy, const int32_t *argmax,
                              float *dx, bool dx_add) {
  size_t in = (size_t)p->h * (size_t)p->w * LANES, out = (size_t)p->ho * (size_t)p->wo * LANES;
#pragma omp parallel for schedule(guided) num_threads(swk_threads())
  for (int k = 0; k < planes(p, batch); k++)
    if (p->max && windows_tile(p))
      max_backward_tiled(p, dy + (size_t)k * out, argmax + (size_t)k * out, dx + (size_t)k * in,
                         dx_add);
    else if (p->max)
      max_backward_plane(p, dy + (size_t)k * out, argmax + (size_t)k * out, dx + (size_t)k * in,
                         dx_add);
    else
      avg_backward_plane(p, dy + (size_t)k * out, dx + (size_t)k * in, dx_add);
}
