/* Convolution by explicit GEMM (im2col + sgemm), with groups. Images are split over threads;
 * each thread packs `nb` of its images side by side into one column matrix so that one GEMM
 * covers them (small images would otherwise give GEMMs too small to run fast). Per group g:
 *   Y_g (co/g x nb*P) = W_g (co/g x K) * col_g (K x nb*P),   K = ci/g*kh*kw, P = ho*wo
 *   dW_g^T += col_g * dY_g^T  (transposed, so that the operand the GEMM packs across is dY)
 *   dX: with stride 1 and "same" padding, dX_g = Wf_g (ci/g x co/g*kh*kw) * im2col(dY_g), a forward convolution
 *       of dY with the flipped, channel-transposed filters Wf and padding k-1-p: a GEMM with a
 *       long inner dimension, written straight into dX. Otherwise dcol_g = W_g^T * dY_g and
 *       dX = col2im(dcol_g), whose GEMM has only co/g as inner dimension.
 * Each thread accumulates its own dW and db; they are summed in thread order afterwards, so
 * results are the same from run to run for a given thread count. */
#include <omp.h>
#include <string.h>

#include "gemm.h"
#include "im2col.h"

enum { PACK_FLOATS = 1 << 16 }; /* packed columns per thread: 256 KB stays in L2 */

typedef struct Dims {
  int cig, cog; /* channels per group */
  int k;        /* rows of col: cig * kh * kw */
  int pixels;   /* P = ho * wo */
  int nb;       /* images packed per GEMM */
  size_t in_image, out_image;
  bool flip; /* dX as a convolution of dY with flipped filters (stride 1) */
  SwkConv t; /* that convolution: dY (co/g channels, ho x wo) to dX_g (ci/g, h x w) */
} Dims;

static Dims dims(const SwkConv *p) {
  Dims d = {.cig = p->ci / p->groups, .cog = p->co / p->groups, .pixels = p->ho * p->wo, .nb = 1};
  d.k = d.cig * p->kh * p->kw;
  size_t per_image = (size_t)d.k * d.pixels;
  d.nb = per_image >= PACK_FLOATS ? 1 : (int)(PACK_FLOATS / per_image);
  d.in_image = (size_t)p->ci * p->h * p->w;
  d.out_image = (size_t)p->co * d.pixels;
  /* The flipped convolution does h*w/(ho*wo) times the old path's arithmetic: use it only for
   * stride-1 convolutions that keep the image size ("same" padding), where it is no more work
   * with a better GEMM shape. For "valid" ones (LeNet's 12x12 -> 8x8) it was 2.25x the work. */
  d.flip =
      p->sh == 1 && p->sw == 1 && p->ph < p->kh && p->pw < p->kw && p->h * p->w <= p->ho * p->wo;
  d.t = (SwkConv){.ci = d.cog,
                  .h = p->ho,
                  .w = p->wo,
                  .co = d.cig,
                  .ho = p->h,
                  .wo = p->w,
                  .kh = p->kh,
                  .kw = p->kw,
                  .sh = 1,
                  .sw = 1,
                  .ph = p->kh - 1 - p->ph,
                  .pw = p->kw - 1 - p->pw,
                  .groups = 1};
  return d;
}

/* Per thread: packed columns (K x nb*P; with flip also dY's columns for one image), packed
 * outputs or output gradients (co/g x nb*P), for backward a private dW (per group, K x co/g)
 * and db (co),
 * and the GEMM's own packing area. Shared by all threads, after them: the flipped filters
 * (the size of W). */
typedef struct Scratch {
  float *col, *packed, *dw, *db, *gemm;
} Scratch;

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

static size_t col_floats(const Dims *d) {
  size_t x_cols = (size_t)d->k * d->nb * d->pixels;
  size_t dy_cols = d->flip ? (size_t)d->cog * d->t.kh * d->t.kw * d->t.ho * d->t.wo : 0;
  return round16(x_cols > dy_cols ? x_cols : dy_cols);
}

static size_t per_thread(const SwkConv *p, const Dims *d) {
  size_t cols = (size_t)d->nb * d->pixels;
  return col_floats(d) + round16((size_t)d->cog * cols) + round16((size_t)p->co * d->k) +
         round16((size_t)p->co) + HOST_GEMM_PACK_FLOATS;
}

static Scratch scratch(const SwkConv *p, const Dims *d, float *ws, int thread) {
  size_t cols = (size_t)d->nb * d->pixels;
  Scratch s;
  s.col = ws + per_thread(p, d) * (size_t)thread;
  s.packed = s.col + col_floats(d);
  s.dw = s.packed + round16((size_t)d->cog * cols);
  s.db = s.dw + round16((size_t)p->co * d->k);
  s.gemm = s.db + round16((size_t)p->co);
  return s;
}

static float *flipped_filters(const SwkConv *p, const Dims *d, float *ws) {
  return ws + per_thread(p, d) * (size_t)swk_threads();
}

size_t swk_conv_workspace(const SwkConv *p) {
  Dims d = dims(p);
  return per_thread(p, &d) * (size_t)swk_threads() + (size_t)p->co * d.k;
}

/* Wf_g[c][o][a][b] = W_g[o][c][kh-1-a][kw-1-b]: group g's filters seen from dY's side. */
static void flip_filters(const SwkConv *p, const Dims *d, const float *w, float *wf) {
  int taps = p->kh * p->kw;
  for (int g = 0; g < p->groups; g++)
    for (int o = 0; o < d->cog; o++)
      for (int c = 0; c < d->cig; c++)
        for (int t = 0; t < taps; t++)
          wf[(((size_t)g * d->cig + c) * d->cog + o) * taps + (taps - 1 - t)] =
              w[(((size_t)g * d->cog + o) * d->cig + c) * taps + t];
}

/* Images [from, to) of `batch` for thread t of nt: the same static split everywhere. */
static void share(int batch, int t, int nt, int *from, int *to) {
  *from = (int)((int64_t)batch * t / nt);
  *to = (int)((int64_t)batch * (t + 1) / nt);
}

static void pack_columns(const SwkConv *p, const Dims *d, const float *x, int first, int n, int g,
                         float *col) {
  size_t ld = (size_t)n * d->pixels;
  for (int j = 0; j < n; j++)
    host_im2col(p, d->cig, x + (size_t)(first + j) * d->in_image + (size_t)g * d->cig * p->h * p->w,
                col + (size_t)j * d->pixels, ld);
}

static void forward_images(const SwkConv *p, const Dims *d, int from, int to, const float *x,
                           const float *w, const float *b, float *y, Scratch s) {
  for (int first = from; first < to; first += d->nb) {
    int n = to - first < d->nb ? to - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      pack_columns(p, d, x, first, n, g, s.col);
      host_sgemm(false, false, d->cog, (int)ld, d->k, w + (size_t)g * d->cog * d->k, d->k, s.col,
                 ld, 0.0f, s.packed, ld, s.gemm);
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

void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                      float *y, float *ws) {
  Dims d = dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), from, to;
    share(batch, t, omp_get_num_threads(), &from, &to);
    forward_images(p, &d, from, to, x, w, b, y, scratch(p, &d, ws, t));
  }
}

/* dX of one image and group as the convolution of dY with the flipped filters. */
static void flipped_dx(const SwkConv *p, const Dims *d, const float *wf, const float *dy, int n,
                       int g, float *dx, bool dx_add, Scratch s) {
  int kt = d->cog * p->kh * p->kw, hw = p->h * p->w;
  host_im2col(&d->t, d->cog, dy + (size_t)n * d->out_image + (size_t)g * d->cog * d->pixels, s.col,
              (size_t)hw);
  host_sgemm(false, false, d->cig, hw, kt, wf + (size_t)g * d->cig * kt, kt, s.col, hw,
             dx_add ? 1.0f : 0.0f, dx + (size_t)n * d->in_image + (size_t)g * d->cig * hw, hw,
             s.gemm);
}

/* Gathers dY_g of the packed images [first, first + n) into s.packed, adding their sums to db. */
static void pack_output_gradient(const Dims *d, const float *dy, int first, int n, int g,
                                 float *packed, float *db) {
  size_t ld = (size_t)n * d->pixels;
  for (int j = 0; j < n; j++)
    for (int c = 0; c < d->cog; c++) {
      const float *src =
          dy + (size_t)(first + j) * d->out_image + (size_t)(g * d->cog + c) * d->pixels;
      float *dst = packed + (size_t)c * ld + (size_t)j * d->pixels, sum = 0;
      for (int i = 0; i < d->pixels; i++) sum += dst[i] = src[i];
      if (db) db[g * d->cog + c] += sum;
    }
}

/* dW and db of images [from, to) into the thread's private buffers if `weights`; dx if asked. */
static void backward_images(const SwkConv *p, const Dims *d, int from, int to, const float *x,
                            const float *w, const float *wf, const float *dy, float *dx,
                            bool dx_add, bool weights, Scratch s) {
  if (weights) {
    memset(s.dw, 0, sizeof(float) * (size_t)p->co * d->k);
    memset(s.db, 0, sizeof(float) * (size_t)p->co);
  }
  if (dx && !dx_add && !d->flip)
    memset(dx + (size_t)from * d->in_image, 0, sizeof(float) * d->in_image * (size_t)(to - from));
  for (int first = from; first < to; first += d->nb) {
    int n = to - first < d->nb ? to - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      if (weights || (dx && !d->flip))
        pack_output_gradient(d, dy, first, n, g, s.packed, weights ? s.db : NULL);
      if (weights) {
        pack_columns(p, d, x, first, n, g, s.col);
        /* dW_g^T (K x co/g) += col_g dY_g^T: the operand the GEMM packs transposed is the
         * small one (dY), not the columns */
        host_sgemm(false, true, d->k, d->cog, (int)ld, s.col, ld, s.packed, ld, 1.0f,
                   s.dw + (size_t)g * d->cog * d->k, d->cog, s.gemm);
      }
      if (!dx) continue;
      if (d->flip) {
        for (int j = 0; j < n; j++) flipped_dx(p, d, wf, dy, first + j, g, dx, dx_add, s);
        continue;
      }
      host_sgemm(true, false, d->k, (int)ld, d->cog, w + (size_t)g * d->cog * d->k, d->k, s.packed,
                 ld, 0.0f, s.col, ld, s.gemm);
      for (int j = 0; j < n; j++)
        host_col2im(p, d->cig, s.col + (size_t)j * d->pixels, ld,
                    dx + (size_t)(first + j) * d->in_image + (size_t)g * d->cig * p->h * p->w);
    }
  }
}

/* dw and db as the sums of the threads' private ones, in thread order (inside the team). The
 * private ones hold each group's dW transposed (K x co/g). */
static void sum_private_gradients(const SwkConv *p, const Dims *d, int nt, float *ws, float *dw,
                                  float *db) {
  size_t wsize = (size_t)p->co * d->k;
#pragma omp for schedule(static)
  for (size_t i = 0; i < wsize; i++) { /* i: (group, channel o in it, row k of col) */
    size_t k = i % d->k, o = i / d->k % d->cog, g = i / ((size_t)d->k * d->cog);
    size_t at = (g * d->k + k) * d->cog + o;
    float sum = 0;
    for (int t = 0; t < nt; t++) sum += scratch(p, d, ws, t).dw[at];
    dw[i] = sum;
  }
  if (!db || !p->bias) return;
#pragma omp for schedule(static)
  for (int c = 0; c < p->co; c++) {
    float sum = 0;
    for (int k = 0; k < nt; k++) sum += scratch(p, d, ws, k).db[c];
    db[c] = sum;
  }
}

void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float *ws) {
  Dims d = dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
  float *wf = flipped_filters(p, &d, ws);
  if (dx && d.flip) flip_filters(p, &d, w, wf);
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    share(batch, t, nt, &from, &to);
    backward_images(p, &d, from, to, x, w, wf, dy, dx, dx_add, dw != NULL, scratch(p, &d, ws, t));
#pragma omp barrier
    if (dw) sum_private_gradients(p, &d, nt, ws, dw, db);
  }
}
