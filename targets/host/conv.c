/* Convolution by explicit GEMM (im2col + sgemm), with groups. Images are split over threads;
 * each thread packs `nb` of its images side by side into one column matrix so that one GEMM
 * covers them (small images would otherwise give GEMMs too small to run fast). Per group g:
 *   Y_g (co/g x nb*P) = W_g (co/g x K) * col_g (K x nb*P),   K = ci/g*kh*kw, P = ho*wo
 *   dW_g += dY_g * col_g^T,   dcol_g = W_g^T * dY_g,   dX = col2im(dcol_g)
 * Each thread accumulates its own dW and db; they are summed in thread order afterwards, so
 * results are the same from run to run for a given thread count. */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "im2col.h"

enum { PACK_FLOATS = 1 << 16 }; /* packed columns per thread: 256 KB stays in L2 */

typedef struct Dims {
  int cig, cog;  /* channels per group */
  int k;         /* rows of col: cig * kh * kw */
  int pixels;    /* P = ho * wo */
  int nb;        /* images packed per GEMM */
  size_t in_image, out_image;
} Dims;

static Dims dims(const SwkConv *p) {
  Dims d = {p->ci / p->groups, p->co / p->groups, 0, p->ho * p->wo, 1, 0, 0};
  d.k = d.cig * p->kh * p->kw;
  size_t per_image = (size_t)d.k * d.pixels;
  d.nb = per_image >= PACK_FLOATS ? 1 : (int)(PACK_FLOATS / per_image);
  d.in_image = (size_t)p->ci * p->h * p->w;
  d.out_image = (size_t)p->co * d.pixels;
  return d;
}

/* Per thread: packed columns (K x nb*P), packed outputs or output gradients (co/g x nb*P),
 * and for backward a private dW (co x K) and db (co). */
typedef struct Scratch {
  float *col, *packed, *dw, *db;
} Scratch;

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

static size_t per_thread(const SwkConv *p, const Dims *d) {
  size_t cols = (size_t)d->nb * d->pixels;
  return round16((size_t)d->k * cols) + round16((size_t)d->cog * cols) + round16((size_t)p->co * d->k) +
         round16((size_t)p->co);
}

static Scratch scratch(const SwkConv *p, const Dims *d, float *ws, int thread) {
  size_t cols = (size_t)d->nb * d->pixels;
  Scratch s;
  s.col = ws + per_thread(p, d) * (size_t)thread;
  s.packed = s.col + round16((size_t)d->k * cols);
  s.dw = s.packed + round16((size_t)d->cog * cols);
  s.db = s.dw + round16((size_t)p->co * d->k);
  return s;
}

size_t swk_conv_workspace(const SwkConv *p) {
  Dims d = dims(p);
  return per_thread(p, &d) * (size_t)swk_threads();
}

/* Images [from, to) of `batch` for thread t of nt: the same static split everywhere. */
static void share(int batch, int t, int nt, int *from, int *to) {
  *from = (int)((int64_t)batch * t / nt);
  *to = (int)((int64_t)batch * (t + 1) / nt);
}

static void pack_columns(const SwkConv *p, const Dims *d, const float *x, int first, int n, int g, float *col) {
  size_t ld = (size_t)n * d->pixels;
  for (int j = 0; j < n; j++)
    host_im2col(p, d->cig, x + (size_t)(first + j) * d->in_image + (size_t)g * d->cig * p->h * p->w,
                col + (size_t)j * d->pixels, ld);
}

static void forward_images(const SwkConv *p, const Dims *d, int from, int to, const float *x, const float *w,
                           const float *b, float *y, Scratch s) {
  for (int first = from; first < to; first += d->nb) {
    int n = to - first < d->nb ? to - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      pack_columns(p, d, x, first, n, g, s.col);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d->cog, (int)ld, d->k, 1.0f,
                  w + (size_t)g * d->cog * d->k, d->k, s.col, (int)ld, 0.0f, s.packed, (int)ld);
      for (int j = 0; j < n; j++)
        for (int c = 0; c < d->cog; c++) {
          int channel = g * d->cog + c;
          float *dst = y + (size_t)(first + j) * d->out_image + (size_t)channel * d->pixels;
          const float *src = s.packed + (size_t)c * ld + (size_t)j * d->pixels;
          float bias = p->bias ? b[channel] : 0.0f;
          for (int i = 0; i < d->pixels; i++) dst[i] = src[i] + bias;
        }
    }
  }
}

void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b, float *y,
                      float *ws) {
  Dims d = dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), from, to;
    share(batch, t, omp_get_num_threads(), &from, &to);
    forward_images(p, &d, from, to, x, w, b, y, scratch(p, &d, ws, t));
  }
}

/* dW and db of images [from, to) into the thread's private buffers; dx if asked. */
static void backward_images(const SwkConv *p, const Dims *d, int from, int to, const float *x, const float *w,
                            const float *dy, float *dx, bool dx_add, Scratch s) {
  memset(s.dw, 0, sizeof(float) * (size_t)p->co * d->k);
  memset(s.db, 0, sizeof(float) * (size_t)p->co);
  if (dx && !dx_add) memset(dx + (size_t)from * d->in_image, 0, sizeof(float) * d->in_image * (size_t)(to - from));
  for (int first = from; first < to; first += d->nb) {
    int n = to - first < d->nb ? to - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      for (int j = 0; j < n; j++) /* gather dY_g of the packed images */
        for (int c = 0; c < d->cog; c++) {
          const float *src = dy + (size_t)(first + j) * d->out_image + (size_t)(g * d->cog + c) * d->pixels;
          float *dst = s.packed + (size_t)c * ld + (size_t)j * d->pixels, sum = 0;
          for (int i = 0; i < d->pixels; i++) sum += dst[i] = src[i];
          s.db[g * d->cog + c] += sum;
        }
      pack_columns(p, d, x, first, n, g, s.col);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d->cog, d->k, (int)ld, 1.0f, s.packed, (int)ld, s.col,
                  (int)ld, 1.0f, s.dw + (size_t)g * d->cog * d->k, d->k);
      if (!dx) continue;
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d->k, (int)ld, d->cog, 1.0f,
                  w + (size_t)g * d->cog * d->k, d->k, s.packed, (int)ld, 0.0f, s.col, (int)ld);
      for (int j = 0; j < n; j++)
        host_col2im(p, d->cig, s.col + (size_t)j * d->pixels, ld,
                    dx + (size_t)(first + j) * d->in_image + (size_t)g * d->cig * p->h * p->w);
    }
  }
}

void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float *ws) {
  Dims d = dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
  size_t wsize = (size_t)p->co * d.k;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    share(batch, t, nt, &from, &to);
    backward_images(p, &d, from, to, x, w, dy, dx, dx_add, scratch(p, &d, ws, t));
#pragma omp barrier
#pragma omp for schedule(static)
    for (size_t i = 0; i < wsize; i++) {
      float sum = 0;
      for (int k = 0; k < nt; k++) sum += scratch(p, &d, ws, k).dw[i];
      dw[i] = sum;
    }
    if (db && p->bias) {
#pragma omp for schedule(static)
      for (int c = 0; c < p->co; c++) {
        float sum = 0;
        for (int k = 0; k < nt; k++) sum += scratch(p, &d, ws, k).db[c];
        db[c] = sum;
      }
    }
  }
}
