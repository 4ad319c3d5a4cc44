/* Max and average pooling on the channel-blocked layout (B,N/16,R,C,16), with the semantics of
 * pool.c (Caffe's windows; the first maximum in window order wins; averages divide by the
 * window's extent in the padded input): each (image, block of 16 channels) is a plane whose
 * pixels hold 16 lanes, one vector. Threads take the planes as they finish (balance.h; each writes
 * only its own, forward and backward). The unused lanes of the last block are pooled too (they hold whatever the
 * producer left: convolutions write 0). */
#include <omp.h>
#include <string.h>

#include "pool_window.h"
#include "vec16.h"

enum { LANES = 16 };

static int planes(const SwkPool *p, int batch) { return batch * ((p->c + LANES - 1) / LANES); }

/* One output pixel's maximum and where it was, over its window's pixels in order, in native
 * vectors (vec16.h: a 16-lane comparison without AVX-512 is 16 scalar ones). */
static void max_pixel(const SwkPool *p, Window s, const float *x, float *y, int32_t *argmax) {
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

/* The sum is in native vectors too: a 16-float one carried across the loop kept half of it on
 * the stack without AVX-512, stored and reloaded per pixel. */
static void avg_pixel(const SwkPool *p, Window s, const float *x, float *y) {
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
        Window s = pool_window(p, oh, ow);
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
          for (int v = 0; v < HOST_VEC_PARTS; v++) {
            HostIVec at;
            memcpy(&at, argmax + o + v * HOST_VEC_FLOATS, sizeof at);
            sum[v] +=
                (HostVec)((HostIVec)host_vec_load(dy + o + v * HOST_VEC_FLOATS) & (at == here));
          }
        }
      for (int v = 0; v < HOST_VEC_PARTS; v++) host_vec_store(d + v * HOST_VEC_FLOATS, sum[v]);
    }
  }
}

/* One plane's average-pooling input gradient, written or added: each output's gradient spread
 * over its window. */
static void avg_backward_plane(const SwkPool *p, const float *dy, float *dx, bool dx_add) {
  if (!dx_add) memset(dx, 0, sizeof(float) * (size_t)p->h * (size_t)p->w * LANES);
  for (int oh = 0; oh < p->ho; oh++)
    for (int ow = 0; ow < p->wo; ow++) {
      size_t o = ((size_t)oh * (size_t)p->wo + (size_t)ow) * LANES;
      Window s = pool_window(p, oh, ow);
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
    if (p->max)
      max_backward_plane(p, dy + (size_t)k * out, argmax + (size_t)k * out, dx + (size_t)k * in,
                         dx_add);
    else
      avg_backward_plane(p, dy + (size_t)k * out, dx + (size_t)k * in, dx_add);
}
