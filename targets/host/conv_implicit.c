/* Implicit-GEMM convolution on the (R, C, N, B) layout (swDNN's plan): no im2col; for each
 * output pixel, Y[oh][ow] (co x B) += W[kh][kw] (co x ci) X[ih][iw] (ci x B) over the taps that
 * fall inside the image (padding by coordinate mapping). With the batch innermost, the batch is
 * the vector dimension: the micro-kernel keeps CB output channels x NV vectors of 8 images in
 * registers and streams input channels. Work is split over output rows (forward) and input rows
 * (input gradient: a gather, so no two threads write one element). The weight gradient is a
 * GEMM over pixels and images per tap (below).
 * Filters are read in either order: (No,Ni,K,K), as the parameter pool keeps them whatever the
 * plan (so checkpoints and gradient buckets do not depend on it), or swDNN's (K,K,No,Ni)
 * (SwkConv.filters_kkoi); the broadcast loads of the micro-kernel absorb the stride. */
#include <omp.h>
#include <string.h>

#include "gemm.h"
#include "kernels.h"
#include "workspace.h"

typedef float v8 __attribute__((vector_size(32)));
enum { VL = 8, NV = 2, CB = 4 }; /* vector length, vectors per block, channels per block */

static inline v8 load8(const float *p) {
  v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void store8(float *p, v8 v) { memcpy(p, &v, sizeof v); }
static inline v8 splat(float x) { return (v8){x, x, x, x, x, x, x, x}; }

/* Where filter element (tap, co, ci) is: tap * tap + co * co + ci * ci, for either order. */
typedef struct Strides {
  size_t tap, co, ci;
} Strides;

static Strides filter_strides(const SwkConv *p) {
  size_t taps = (size_t)p->kh * p->kw;
  if (p->filters_kkoi) return (Strides){(size_t)p->co * p->ci, (size_t)p->ci, 1};
  return (Strides){1, (size_t)p->ci * taps, taps};
}

/* Pixels' taps (HostTap, workspace.h) are listed once, so coordinate mapping (padding,
 * stride) lives in one place and the vector and scalar paths below share it. */

/* The taps of output pixel (oh, ow) that fall inside the input. */
static int forward_taps(const SwkConv *p, int batch, int oh, int ow, HostTap *taps) {
  int n = 0, hs = oh * p->sh - p->ph, ws = ow * p->sw - p->pw;
  for (int kh = 0; kh < p->kh; kh++)
    for (int kw = 0; kw < p->kw; kw++) {
      int ih = hs + kh, iw = ws + kw;
      if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
      taps[n++] = (HostTap){((size_t)ih * p->w + iw) * p->ci * batch,
                            ((size_t)kh * p->kw + kw) * filter_strides(p).tap};
    }
  return n;
}

/* The output position whose tap k covers input position i, or -1. */
static int source_of(int i, int k, int stride, int pad, int out) {
  int t = i + pad - k;
  if (t < 0 || t % stride) return -1;
  t /= stride;
  return t < out ? t : -1;
}

/* The taps of the output pixels that input pixel (ih, iw) feeds (data: rows of dy). */
static int input_taps(const SwkConv *p, int batch, int ih, int iw, HostTap *taps) {
  int n = 0;
  for (int kh = 0; kh < p->kh; kh++) {
    int oh = source_of(ih, kh, p->sh, p->ph, p->ho);
    for (int kw = 0; kw < p->kw && oh >= 0; kw++) {
      int ow = source_of(iw, kw, p->sw, p->pw, p->wo);
      if (ow >= 0)
        taps[n++] = (HostTap){((size_t)oh * p->wo + ow) * p->co * batch,
                              ((size_t)kh * p->kw + kw) * filter_strides(p).tap};
    }
  }
  return n;
}

/* Sums over taps and k < depth of f[k * fstep] * d[k * batch], for CB filter rows (`frow`
 * apart) and NV vectors of images from b0: the register block of both directions. */
static void block(const HostTap *taps, int ntaps, const float *data, const float *filter, int depth,
                  size_t fstep, size_t frow, int batch, int b0, v8 acc[CB][NV]) {
  for (int c = 0; c < CB; c++)
    for (int v = 0; v < NV; v++) acc[c][v] = splat(0);
  for (int t = 0; t < ntaps; t++) {
    const float *d = data + taps[t].data + b0, *f = filter + taps[t].filter;
    for (int k = 0; k < depth; k++) {
      v8 dv[NV];
      for (int v = 0; v < NV; v++) dv[v] = load8(d + (size_t)k * batch + v * VL);
      for (int c = 0; c < CB; c++) {
        v8 fv = splat(f[(size_t)k * fstep + (size_t)c * frow]);
        for (int v = 0; v < NV; v++) acc[c][v] += fv * dv[v];
      }
    }
  }
}

static float single(const HostTap *taps, int ntaps, const float *data, const float *filter,
                    int depth, size_t fstep, int batch, int b) {
  float acc = 0;
  for (int t = 0; t < ntaps; t++) {
    const float *d = data + taps[t].data + b, *f = filter + taps[t].filter;
    for (int k = 0; k < depth; k++) acc += f[(size_t)k * fstep] * d[(size_t)k * batch];
  }
  return acc;
}

/* out[ch][b] (written or added) = bias + the sums above, for every channel and image: register
 * blocks where they fit, single sums for the remainders. Forward: channels are output
 * channels, depth input channels (fstep: the ci stride, frow: the co stride). Input gradient:
 * channels are input channels, depth output channels (the other way round). */
static void pixel(const HostTap *taps, int ntaps, const float *data, const float *filter,
                  int channels, int depth, size_t fstep, size_t frow, int batch, const float *bias,
                  float *out, bool add) {
  int bfull = batch / (VL * NV) * (VL * NV), cfull = channels / CB * CB;
  for (int ch = 0; ch < cfull; ch += CB)
    for (int b0 = 0; b0 < bfull; b0 += VL * NV) {
      v8 acc[CB][NV];
      block(taps, ntaps, data, filter + (size_t)ch * frow, depth, fstep, frow, batch, b0, acc);
      for (int c = 0; c < CB; c++)
        for (int v = 0; v < NV; v++) {
          float *o = out + (size_t)(ch + c) * batch + b0 + v * VL;
          v8 r = acc[c][v] + splat(bias ? bias[ch + c] : 0);
          store8(o, add ? load8(o) + r : r);
        }
    }
  for (int ch = 0; ch < channels; ch++)
    for (int b = ch < cfull ? bfull : 0; b < batch; b++) {
      float r = single(taps, ntaps, data, filter + (size_t)ch * frow, depth, fstep, batch, b) +
                (bias ? bias[ch] : 0);
      float *o = out + (size_t)ch * batch + b;
      *o = add ? *o + r : r;
    }
}

size_t swk_conv_implicit_workspace(const SwkConv *p, int batch) {
  return host_conv_implicit_workspace(p, batch, swk_threads());
}

static HostTap *thread_taps(const SwkConv *p, float *ws) {
  return (HostTap *)(ws + host_tap_floats(p) * (size_t)omp_get_thread_num());
}

void swk_conv_implicit_forward(const SwkConv *p, int batch, const float *x, const float *w,
                               const float *b, float *y, float *ws) {
  Strides st = filter_strides(p);
#pragma omp parallel num_threads(swk_threads()) /* the workspace has room for as many */
  {
    HostTap *taps = thread_taps(p, ws);
#pragma omp for schedule(static)
    for (int oh = 0; oh < p->ho; oh++)
      for (int ow = 0; ow < p->wo; ow++) {
        int n = forward_taps(p, batch, oh, ow, taps);
        pixel(taps, n, x, w, p->co, p->ci, st.ci, st.co, batch, p->bias ? b : NULL,
              y + ((size_t)oh * p->wo + ow) * p->co * batch, false);
      }
  }
}

/* ------------------------------------------------------------------ input gradient */

/* A gather: each input pixel sums what its output pixels send back, so no two threads write
 * the same element. */
static void input_gradient(const SwkConv *p, int batch, const float *w, const float *dy, float *dx,
                           bool dx_add, float *ws) {
  Strides st = filter_strides(p);
#pragma omp parallel num_threads(swk_threads()) /* the workspace has room for as many */
  {
    HostTap *taps = thread_taps(p, ws);
#pragma omp for schedule(static)
    for (int ih = 0; ih < p->h; ih++)
      for (int iw = 0; iw < p->w; iw++) {
        int n = input_taps(p, batch, ih, iw, taps);
        pixel(taps, n, dy, w, p->ci, p->co, st.co, st.ci, batch, NULL,
              dx + ((size_t)ih * p->w + iw) * p->ci * batch, dx_add);
      }
  }
}

/* ------------------------------------------------------------------ weight gradient */

/* Per tap, dW_tap (co x ci) = sum over output pixels p of dY[p] (co x B) X[p'] (ci x B)^T, p'
 * the input pixel the tap reads: a GEMM whose inner dimension runs over pixels and images. It
 * is cut into blocks of PIXEL_BLOCK output pixels; per block and tap the rows of the pixels
 * inside the image are packed side by side (co x n*B and ci x n*B, in cache) and one sgemm
 * accumulates them. Threads take blocks statically, each into its own (tap, co, ci) sums, and
 * the sums are added in thread order, so results depend only on the thread count. */
/* Adds the block of output pixels [first, first + n) to sums (tap, co, ci). */
static void weight_block(const SwkConv *p, int batch, const float *x, const float *dy, int first,
                         int n, float *sums, float *dy_pack, float *x_pack, float *gemm) {
  for (int kh = 0; kh < p->kh; kh++)
    for (int kw = 0; kw < p->kw; kw++) {
      int count = 0;
      for (int pix = first; pix < first + n; pix++) {
        int oh = pix / p->wo, ow = pix % p->wo, ih = oh * p->sh - p->ph + kh,
            iw = ow * p->sw - p->pw + kw;
        if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
        const float *d = dy + (size_t)pix * p->co * batch,
                    *xs = x + ((size_t)ih * p->w + iw) * p->ci * batch;
        size_t ld = (size_t)n * batch, at = (size_t)count * batch;
        for (int c = 0; c < p->co; c++)
          memcpy(dy_pack + c * ld + at, d + (size_t)c * batch, sizeof(float) * batch);
        for (int c = 0; c < p->ci; c++)
          memcpy(x_pack + c * ld + at, xs + (size_t)c * batch, sizeof(float) * batch);
        count++;
      }
      if (!count) continue;
      int k = count * batch, ld = n * batch;
      host_sgemm(false, true, p->co, p->ci, k, dy_pack, (size_t)ld, x_pack, (size_t)ld, 1.0f,
                 sums + ((size_t)kh * p->kw + kw) * p->co * p->ci, p->ci, gemm);
    }
}

static void weight_gradient(const SwkConv *p, int batch, const float *x, const float *dy, float *dw,
                            float *db, float scale, float bias_scale, float keep, float *ws) {
  int pixels = p->ho * p->wo, block = host_pixel_block(batch),
      blocks = (pixels + block - 1) / block;
  size_t per_thread = host_implicit_thread_floats(p, batch),
         weights = (size_t)p->kh * p->kw * p->co * p->ci;
  Strides st = filter_strides(p);
  int threads = swk_threads() < blocks ? swk_threads() : blocks;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    float *sums = ws + per_thread * (size_t)t, *dy_pack = sums + weights;
    float *x_pack = dy_pack + (size_t)p->co * block * batch;
    float *gemm = x_pack + (size_t)p->ci * block * batch;
    memset(sums, 0, sizeof(float) * weights);
    for (int b = (int)((int64_t)blocks * t / nt); b < (int)((int64_t)blocks * (t + 1) / nt); b++) {
      int first = b * block, n = pixels - first < block ? pixels - first : block;
      weight_block(p, batch, x, dy, first, n, sums, dy_pack, x_pack, gemm);
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (size_t i = 0; i < weights; i++) { /* i = (tap, co, ci) */
      float sum = 0;
      for (int k = 0; k < nt; k++) sum += ws[per_thread * (size_t)k + i];
      size_t ci = i % p->ci, co = i / p->ci % p->co, tap = i / ((size_t)p->ci * p->co);
      float *at = &dw[tap * st.tap + co * st.co + ci * st.ci];
      *at = swk_gradient_store(*at, sum, scale, keep);
    }
  }
  if (!db || !p->bias) return;
#pragma omp parallel for schedule(static)
  for (int co = 0; co < p->co; co++) {
    double s = 0;
    for (int pix = 0; pix < pixels; pix++)
      for (int b = 0; b < batch; b++) s += dy[((size_t)pix * p->co + co) * batch + b];
    db[co] = swk_gradient_store(db[co], (float)s, bias_scale, keep);
  }
}

void swk_conv_implicit_backward(const SwkConv *p, int batch, const float *x, const float *w,
                                const float *dy, float *dx, bool dx_add, float *dw, float *db,
                                float grad_scale, float bias_grad_scale, float grad_keep,
                                float *ws) {
  if (dw) weight_gradient(p, batch, x, dy, dw, db, grad_scale, bias_grad_scale, grad_keep, ws);
  if (dx) input_gradient(p, batch, w, dy, dx, dx_add, ws);
}

/* ------------------------------------------------------------------ layout transforms */

/* Element (n, c, i) of the (B,N,R,C) tensor is at (n * c_count + c) * hw + i; in (R,C,N,B) at
 * (i * c_count + c) * batch + n. Each loop nest writes contiguously and reads with a stride. */
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
