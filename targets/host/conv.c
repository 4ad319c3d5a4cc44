/* Convolution by explicit GEMM (im2col + sgemm), with groups; images are spread over
 * threads. Per image and group g:  Y_g (co/g x ho*wo) = W_g (co/g x K) * col_g (K x ho*wo),
 * K = ci/g * kh * kw. Backward: dW_g += dY_g * col_g^T, dcol = W_g^T * dY_g, dX = col2im(dcol).
 * Each thread accumulates its own dW and db, summed in thread order afterwards, so results are
 * the same from run to run for a given thread count. */
#include <cblas.h>
#include <omp.h>
#include <string.h>

#include "im2col.h"

typedef struct Dims {
  int cig, cog;   /* channels per group */
  int k;          /* rows of col: cig * kh * kw */
  int pixels;     /* ho * wo */
  bool direct;    /* 1x1, stride 1, no pad: the input is its own col matrix */
} Dims;

static Dims dims(const SwkConv *p) {
  Dims d = {p->ci / p->groups, p->co / p->groups, 0, p->ho * p->wo, false};
  d.k = d.cig * p->kh * p->kw;
  d.direct = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0;
  return d;
}

/* Per thread: a col matrix, and for backward a private dW and db. */
static size_t per_thread(const SwkConv *p) {
  Dims d = dims(p);
  size_t n = (size_t)d.k * d.pixels + (size_t)p->co * d.k + (size_t)p->co;
  return (n + 15) & ~(size_t)15;
}

size_t swk_conv_workspace(const SwkConv *p) { return per_thread(p) * (size_t)swk_threads(); }

void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b, float *y,
                      float *ws) {
  Dims d = dims(p);
  size_t in_image = (size_t)p->ci * p->h * p->w, out_image = (size_t)p->co * d.pixels;
#pragma omp parallel for schedule(static)
  for (int n = 0; n < batch; n++) {
    float *col = ws + per_thread(p) * (size_t)omp_get_thread_num();
    for (int g = 0; g < p->groups; g++) {
      const float *xg = x + n * in_image + (size_t)g * d.cig * p->h * p->w;
      float *yg = y + n * out_image + (size_t)g * d.cog * d.pixels;
      const float *a = xg;
      if (!d.direct) {
        host_im2col(p, d.cig, xg, col);
        a = col;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d.cog, d.pixels, d.k, 1.0f,
                  w + (size_t)g * d.cog * d.k, d.k, a, d.pixels, 0.0f, yg, d.pixels);
    }
    if (p->bias)
      for (int c = 0; c < p->co; c++) {
        float *row = y + n * out_image + (size_t)c * d.pixels, bc = b[c];
        for (int i = 0; i < d.pixels; i++) row[i] += bc;
      }
  }
}

/* dW and db of one thread's images, into that thread's private buffers; dx if asked. */
static void backward_images(const SwkConv *p, const Dims *d, int from, int to, const float *x, const float *w,
                            const float *dy, float *dx, bool dx_add, float *col, float *dw, float *db) {
  size_t in_image = (size_t)p->ci * p->h * p->w, out_image = (size_t)p->co * d->pixels;
  memset(dw, 0, sizeof(float) * (size_t)p->co * d->k);
  memset(db, 0, sizeof(float) * (size_t)p->co);
  for (int n = from; n < to; n++) {
    if (dx && !dx_add) memset(dx + n * in_image, 0, sizeof(float) * in_image);
    for (int g = 0; g < p->groups; g++) {
      const float *xg = x + n * in_image + (size_t)g * d->cig * p->h * p->w;
      const float *dyg = dy + n * out_image + (size_t)g * d->cog * d->pixels;
      const float *a = xg;
      if (!d->direct) {
        host_im2col(p, d->cig, xg, col);
        a = col;
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d->cog, d->k, d->pixels, 1.0f, dyg, d->pixels, a,
                  d->pixels, 1.0f, dw + (size_t)g * d->cog * d->k, d->k);
      if (!dx) continue;
      float *dxg = dx + n * in_image + (size_t)g * d->cig * p->h * p->w;
      if (d->direct) { /* dX_g += W_g^T dY_g directly */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d->k, d->pixels, d->cog, 1.0f,
                    w + (size_t)g * d->cog * d->k, d->k, dyg, d->pixels, 1.0f, dxg, d->pixels);
        continue;
      }
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d->k, d->pixels, d->cog, 1.0f,
                  w + (size_t)g * d->cog * d->k, d->k, dyg, d->pixels, 0.0f, col, d->pixels);
      host_col2im(p, d->cig, col, dxg);
    }
    for (int c = 0; c < p->co; c++) {
      const float *row = dy + n * out_image + (size_t)c * d->pixels;
      float s = 0;
      for (int i = 0; i < d->pixels; i++) s += row[i];
      db[c] += s;
    }
  }
}

void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float *ws) {
  Dims d = dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
  size_t stride = per_thread(p), wsize = (size_t)p->co * d.k;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    float *col = ws + stride * (size_t)t, *tdw = col + (size_t)d.k * d.pixels, *tdb = tdw + wsize;
    /* the same static split as the forward loop */
    int from = (int)((int64_t)batch * t / nt), to = (int)((int64_t)batch * (t + 1) / nt);
    backward_images(p, &d, from, to, x, w, dy, dx, dx_add, col, tdw, tdb);
#pragma omp barrier
#pragma omp for schedule(static)
    for (size_t i = 0; i < wsize; i++) {
      float s = 0;
      for (int k = 0; k < nt; k++) s += ws[stride * (size_t)k + (size_t)d.k * d.pixels + i];
      dw[i] = s;
    }
#pragma omp for schedule(static)
    for (int c = 0; c < p->co; c++) {
      float s = 0;
      for (int k = 0; k < nt; k++) s += ws[stride * (size_t)k + (size_t)d.k * d.pixels + wsize + (size_t)c];
      if (db && p->bias) db[c] = s;
    }
  }
}
