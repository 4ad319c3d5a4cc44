/* Convolution by explicit GEMM, with groups. The GEMM reads the column matrix (im2col) straight
 * from the images, a block at a time as it packs (im2col.h), so it is never written out. Images
 * are taken by threads in pieces as they finish (balance.h); a thread puts `nb` of its small
 * images side by side so that one GEMM covers them (one small image alone gives a GEMM too
 * narrow to run fast). Per group g:
 *   Y_g (co/g x nb*P) = W_g (co/g x K) * col_g (K x nb*P),   K = ci/g*kh*kw, P = ho*wo
 *   dW_g^T = col_g * dY_g^T  (transposed, so that the operand the GEMM packs across is dY),
 *       its rows or, if it is wider than tall, its columns split over threads: each thread
 *       sums all images for its block, in one order whatever the thread count, then writes it
 *       into dW
 *   dX: with stride 1 and "same" padding, dX_g = Wf_g (ci/g x co/g*kh*kw) * im2col(dY_g), a
 *       forward convolution of dY with the flipped, channel-transposed filters Wf and padding
 *       k-1-p: a GEMM with a long inner dimension, over nb images side by side as forward
 *       (written straight into dX for one image). Otherwise
 *       dcol_g = W_g^T * dY_g is written out and dX = col2im(dcol_g); that GEMM has only co/g
 *       as inner dimension.
 * db is split over threads by channel. Every sum runs over the images in the same order
 * whatever the thread count, so results do not depend on it. */
#include <assert.h>
#include <omp.h>
#include <string.h>

#include "balance.h"
#include "gemm.h"
#include "im2col.h"
#include "transpose8.h"
#include "workspace.h"

/* Per thread: for the col2im path (no flip) the written-out column gradient (K x nb*P); the
 * gathered outputs, output gradients or flipped input gradients of nb images; the GEMM's own
 * packing area; padded copies of the images whose columns the GEMM reads (nb images of x or of
 * dY). Shared by all threads, after them: the packed filters and dW transposed. */
typedef struct Scratch {
  float *col, *packed, *gemm, *padded;
} Scratch;

static Scratch scratch(const SwkConv *p, const HostConvDims *d, float *ws, int thread) {
  Scratch s;
  s.col = ws + host_conv_thread_floats(p, d) * (size_t)thread;
  s.packed = s.col + host_col_floats(d);
  s.gemm = s.packed + host_packed_floats(d);
  s.padded = s.gemm + HOST_GEMM_PACK_FLOATS;
  return s;
}

/* [from, to) of `count` things for thread t of nt: an even share. */
static void share(int count, int t, int nt, int *from, int *to) {
  *from = (int)((int64_t)count * t / nt);
  *to = (int)((int64_t)count * (t + 1) / nt);
}

/* The queue of a batch's images in pieces for `threads` threads (balance.h): runs of *unit
 * images, those one GEMM takes together (nb) but no more than an even share. */
static HostQueue image_queue(int batch, int nb, int threads, int *unit) {
  int even = (batch + threads - 1) / threads;
  *unit = nb < even ? nb : even;
  return (HostQueue){0, (batch + *unit - 1) / *unit};
}

/* The images [from, to) of the calling thread's next piece; false when none is left. */
static bool take_images(HostQueue *q, int unit, int batch, int *from, int *to) {
  long u0, u1;
  if (!host_take(q, omp_get_num_threads(), 1, &u0, &u1)) return false;
  *from = (int)u0 * unit;
  *to = (int)u1 * unit < batch ? (int)u1 * unit : batch;
  return true;
}

/* [from, to) of `count` things for thread t of nt, in whole units of `unit`. */
static void share_units(int count, int unit, int t, int nt, int *from, int *to) {
  int units = (count + unit - 1) / unit;
  share(units, t, nt, from, to);
  *from = *from * unit < count ? *from * unit : count;
  *to = *to * unit < count ? *to * unit : count;
}

/* The filters as the GEMMs' A operand, packed once per call for all threads and images:
 * forward W_g (co/g x K), or dX's operand (dx_filters), a group after another. */
static float *packed_filters(const SwkConv *p, const HostConvDims *d, float *ws) {
  return ws + host_conv_thread_floats(p, d) * (size_t)swk_threads();
}

static float *transposed_weight_gradient(const SwkConv *p, const HostConvDims *d, float *ws) {
  return packed_filters(p, d, ws) + host_round16(host_filter_panels_floats(p, d));
}

size_t swk_conv_workspace(const SwkConv *p) { return host_conv_workspace(p, swk_threads()); }

/* Wf_g[c][o][a][b] = W_g[o][c][kh-1-a][kw-1-b]: group g's filters seen from dY's side, as a
 * computed operand (HostBlock) the packing reads. */
typedef struct Flipped {
  const SwkConv *conv;
  const HostConvDims *dims;
  const float *w; /* group g's filters */
} Flipped;

static void flipped_block(const void *source, int r0, int rows, int c0, int cols, float *dst,
                          size_t pitch) {
  const Flipped *f = source;
  int taps = f->conv->kh * f->conv->kw;
  for (int r = 0; r < rows; r++)
    for (int j = 0; j < cols; j++) {
      int o = (c0 + j) / taps, t = (c0 + j) % taps;
      dst[(size_t)r * pitch + (size_t)j] =
          f->w[((size_t)o * f->dims->cig + (size_t)(r0 + r)) * (size_t)taps +
               (size_t)(taps - 1 - t)];
    }
}

/* Group g's operand A of the input gradient's GEMM (host_dx_filters_shape): the flipped
 * filters, or W_g^T (a 1x1 filter's flip; col2im's operand). */
static HostMatrix dx_filters(const SwkConv *p, const HostConvDims *d, const float *w, int g,
                             Flipped *flipped) {
  const float *w_g = w + (size_t)g * d->cog * d->k;
  if (!d->flip || d->pointwise) return host_stored(w_g, (size_t)d->k, true);
  *flipped = (Flipped){p, d, w_g};
  return (HostMatrix){.block = flipped_block, .source = flipped};
}

/* Where group g's filters start among the packed ones: each group's m x k operand (forward's
 * W_g, or host_dx_filters_shape's) follows the previous group's. */
static size_t group_panels(int g, int m, int k) {
  return (size_t)g * host_gemm_packed_floats(m, k);
}

/* Thread t of nt's share of packing every group's filters: forward's W_g or dX's operand. */
static void pack_filters(const SwkConv *p, const HostConvDims *d, const float *w, bool for_dx,
                         int t, int nt, float *panels) {
  for (int g = 0; g < p->groups; g++) {
    Flipped flipped;
    int m = d->cog, k = d->k, r0, r1;
    if (for_dx) host_dx_filters_shape(p, d, &m, &k);
    HostMatrix a = for_dx ? dx_filters(p, d, w, g, &flipped)
                          : host_stored(w + (size_t)g * d->cog * d->k, (size_t)d->k, false);
    share_units(m, host_gemm_rows(), t, nt, &r0, &r1);
    host_gemm_pack(a, m, k, r0, r1, panels + group_panels(g, m, k));
  }
}

/* Rows [row0, row1) of group g's column matrix of images [first, first + n), as a GEMM operand;
 * `view` holds it. Only the channels those rows read are padded (a thread computing part of
 * dW^T reads part of them). */
static HostMatrix input_columns(const SwkConv *p, const HostConvDims *d, const float *x, int first,
                                int n, int g, int row0, int row1, float *padded,
                                HostColumns *view) {
  int taps = p->kh * p->kw, c0 = row0 / taps, c1 = (row1 + taps - 1) / taps;
  const float *images = x + (size_t)first * d->in_image + ((size_t)g * d->cig + c0) * p->h * p->w;
  if (d->pointwise && n == 1) return host_stored(images, (size_t)d->pixels, false);
  *view = host_pad(p, c1 - c0, images, d->in_image, n, padded);
  view->row0 = row0 - c0 * taps;
  return host_columns(view);
}

/* y of images [first, first + n), group g, from the GEMM's result `c` (co/g x n*P; for one
 * image c is y itself), plus the bias. */
static void store_outputs(const SwkConv *p, const HostConvDims *d, int first, int n, int g,
                          const float *c, const float *b, float *y) {
  size_t ld = (size_t)n * d->pixels;
  for (int j = 0; j < n; j++)
    for (int o = 0; o < d->cog; o++) {
      int channel = g * d->cog + o;
      float *dst = y + (size_t)(first + j) * d->out_image + (size_t)channel * d->pixels;
      const float *src = c + (size_t)o * ld + (size_t)j * d->pixels;
      float bias = p->bias ? b[channel] : 0.0f;
      if (src != dst || bias != 0)
        for (int i = 0; i < d->pixels; i++) dst[i] = src[i] + bias;
    }
}

static void forward_images(const SwkConv *p, const HostConvDims *d, int from, int to,
                           const float *x, const float *panels, const float *b, float *y,
                           Scratch s) {
  for (int first = from; first < to; first += d->nb) {
    int n = to - first < d->nb ? to - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      HostColumns view;
      float *c =
          n == 1 ? y + (size_t)first * d->out_image + (size_t)g * d->cog * d->pixels : s.packed;
      host_gemm(d->cog, (int)ld, d->k, host_packed(panels + group_panels(g, d->cog, d->k)),
                input_columns(p, d, x, first, n, g, 0, d->k, s.padded, &view), 0.0f, c, ld, s.gemm);
      store_outputs(p, d, first, n, g, c, b, y);
    }
  }
}

void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                      float *y, float *ws) {
  HostConvDims d = host_conv_dims(p);
  int threads = swk_threads() < batch ? swk_threads() : batch;
  float *panels = packed_filters(p, &d, ws);
  int unit;
  HostQueue images = image_queue(batch, d.nb, threads, &unit);
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    pack_filters(p, &d, w, false, t, nt, panels);
#pragma omp barrier
    while (take_images(&images, unit, batch, &from, &to))
      forward_images(p, &d, from, to, x, panels, b, y, scratch(p, &d, ws, t));
  }
}

/* dX of images [first, first + n), group g, as the convolution of dY with the flipped filters:
 * one GEMM over the images side by side, its result gathered in `packed` and then written or
 * added to dX (for one image, the GEMM writes or adds to dX itself). */
static void flipped_dx(const SwkConv *p, const HostConvDims *d, HostMatrix filters, int kt,
                       const float *dy, int first, int n, int g, float *dx, bool dx_add,
                       Scratch s) {
  int hw = p->h * p->w;
  size_t ld = (size_t)n * hw;
  HostColumns view =
      host_pad(&d->t, d->cog, dy + (size_t)first * d->out_image + (size_t)g * d->cog * d->pixels,
               d->out_image, n, s.padded);
  float *out = dx + (size_t)first * d->in_image + (size_t)g * d->cig * hw;
  float *c = n == 1 ? out : s.packed;
  host_gemm(d->cig, (int)ld, kt, filters, host_columns(&view), n == 1 && dx_add ? 1.0f : 0.0f, c,
            ld, s.gemm);
  for (int j = 0; n > 1 && j < n; j++)
    for (int ch = 0; ch < d->cig; ch++) {
      float *dst = out + (size_t)j * d->in_image + (size_t)ch * hw;
      const float *src = c + (size_t)ch * ld + (size_t)j * hw;
      if (dx_add)
        for (int i = 0; i < hw; i++) dst[i] += src[i];
      else
        memcpy(dst, src, sizeof(float) * (size_t)hw);
    }
}

/* Channels [c0, c1) of dY_g of images [first, first + n) as a (c1 - c0) x n*P matrix: for one
 * image in place, for several gathered into `packed`. */
static const float *output_gradient(const HostConvDims *d, const float *dy, int first, int n, int g,
                                    int c0, int c1, float *packed) {
  const float *images = dy + (size_t)first * d->out_image + ((size_t)g * d->cog + c0) * d->pixels;
  if (n == 1) return images;
  size_t ld = (size_t)n * d->pixels;
  for (int j = 0; j < n; j++)
    for (int c = 0; c < c1 - c0; c++)
      memcpy(packed + (size_t)c * ld + (size_t)j * d->pixels,
             images + (size_t)j * d->out_image + (size_t)c * d->pixels,
             sizeof(float) * (size_t)d->pixels);
  return packed;
}

/* dX of images [from, to), written or added to; `panels` holds dx_filters packed. */
static void input_gradient(const SwkConv *p, const HostConvDims *d, int from, int to,
                           const float *panels, const float *dy, float *dx, bool dx_add,
                           Scratch s) {
  int m, k;
  host_dx_filters_shape(p, d, &m, &k);
  if (!dx_add && !d->flip)
    memset(dx + (size_t)from * d->in_image, 0, sizeof(float) * d->in_image * (size_t)(to - from));
  int nb = d->flip ? d->nb : d->nb_col;
  for (int first = from; first < to; first += nb) {
    int n = to - first < nb ? to - first : nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      HostMatrix filters = host_packed(panels + group_panels(g, m, k));
      if (d->flip) {
        flipped_dx(p, d, filters, k, dy, first, n, g, dx, dx_add, s);
        continue;
      }
      host_gemm(d->k, (int)ld, d->cog, filters,
                host_stored(output_gradient(d, dy, first, n, g, 0, d->cog, s.packed), ld, false),
                0.0f, s.col, ld, s.gemm);
      for (int j = 0; j < n; j++)
        host_col2im(p, d->cig, s.col + (size_t)j * d->pixels, ld,
                    dx + (size_t)(first + j) * d->in_image + (size_t)g * d->cig * p->h * p->w);
    }
  }
}

/* A thread's part of each group's dW^T (K x co/g): rows [r0, r1) by columns [c0, c1). */
typedef struct Block {
  int r0, r1, c0, c1;
} Block;

/* dst[k] = swk_gradient_store(dst[k], g[k], scale, keep) for k < n, its test hoisted. Every
 * element rounds as swk_gradient_store's expression does, whichever path stores it (folded SGD
 * is compared with the update's own rounding: tests/passes/fold_test.sh). */
static inline __attribute__((always_inline)) void
store_gradient_row(float *dst, const float *g, int n, float scale, float keep) {
  if (keep == 0)
    for (int k = 0; k < n; k++) dst[k] = scale * g[k];
  else
    for (int k = 0; k < n; k++) dst[k] = swk_gradient_store(dst[k], g[k], scale, keep);
}

/* dW[o][k] of group g for o in [o0, o0 + no), k in [k0, k0 + nk) (at most 8 x 8) from dW^T:
 * a whole block transposed in registers, an edge one float at a time. (Gathering each row of
 * dW from dW^T's column into a buffer had each vector of it wait for 8-16 scalar stores to reach
 * the cache, and reading it down the column in place was no better: together a quarter of the
 * weight gradient of ResNet-50 res5's 3x3 stride-2 layer at batch 8.) */
static void store_weight_block(const HostConvDims *d, int g, int o0, int no, int k0, int nk,
                               const float *dwt, float *dw, const float *scale_keep) {
  float scale = scale_keep[0], keep = scale_keep[1];
  const float *src = dwt + ((size_t)g * d->k + (size_t)k0) * d->cog + (size_t)o0;
  float *dst = dw + ((size_t)g * d->cog + (size_t)o0) * d->k + (size_t)k0;
  HostV8 row[8];
  if (no == 8 && nk == 8) {
    host_transpose8(src, d->cog, row);
  } else {
    for (int o = 0; o < no; o++)
      for (int k = 0; k < nk; k++) row[o][k] = src[(size_t)k * d->cog + o];
  }
  for (int o = 0; o < no; o++, dst += d->k) {
    float gs[8]; /* a vector's worth, read back as one: the stores forward */
    memcpy(gs, &row[o], sizeof gs);
    if (nk == 8)
      store_gradient_row(dst, gs, 8, scale, keep); /* a constant count: one vector */
    else
      store_gradient_row(dst, gs, nk, scale, keep);
  }
}

/* Block b of each group's dW^T over all images, then that part of dW. */
static void weight_gradient(const SwkConv *p, const HostConvDims *d, int batch, Block b,
                            const float *x, const float *dy, float *dwt, float *dw,
                            const float *scale_keep, Scratch s) {
  if (b.r0 >= b.r1 || b.c0 >= b.c1) return;
  for (int first = 0; first < batch; first += d->nb) {
    int n = batch - first < d->nb ? batch - first : d->nb;
    size_t ld = (size_t)n * d->pixels;
    for (int g = 0; g < p->groups; g++) {
      HostColumns view;
      host_gemm(b.r1 - b.r0, b.c1 - b.c0, (int)ld,
                input_columns(p, d, x, first, n, g, b.r0, b.r1, s.padded, &view),
                host_stored(output_gradient(d, dy, first, n, g, b.c0, b.c1, s.packed), ld, true),
                first ? 1.0f : 0.0f, dwt + ((size_t)g * d->k + b.r0) * d->cog + b.c0, d->cog,
                s.gemm);
    }
  }
  for (int g = 0; g < p->groups; g++)
    for (int o0 = b.c0; o0 < b.c1; o0 += 8)
      for (int k0 = b.r0; k0 < b.r1; k0 += 8)
        store_weight_block(d, g, o0, b.c1 - o0 < 8 ? b.c1 - o0 : 8, k0,
                           b.r1 - k0 < 8 ? b.r1 - k0 : 8, dwt, dw, scale_keep);
}

/* db of channels [from, to). */
static void bias_gradient(const HostConvDims *d, int batch, int from, int to, const float *dy,
                          float *db, const float *scale_keep) {
  for (int c = from; c < to; c++) {
    float sum = 0;
    for (int n = 0; n < batch; n++) {
      const float *src = dy + (size_t)n * d->out_image + (size_t)c * d->pixels;
      for (int i = 0; i < d->pixels; i++) sum += src[i];
    }
    db[c] = swk_gradient_store(db[c], sum, scale_keep[0], scale_keep[1]);
  }
}

/* Thread t of nt's block of dW^T: its longer side split, in whole panels of the GEMM (8 rows,
 * or 16 columns), so that each thread packs the least of the two operands (a split of K has
 * every thread pack all of dY, one of co/g all of the columns). */
static Block weight_block(const HostConvDims *d, int t, int nt) {
  Block b = {0, d->k, 0, d->cog};
  if (d->cog > d->k)
    share_units(d->cog, 16, t, nt, &b.c0, &b.c1);
  else
    share_units(d->k, 8, t, nt, &b.r0, &b.r1);
  return b;
}

void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float grad_scale,
                       float bias_grad_scale, float grad_keep, float *ws) {
  HostConvDims d = host_conv_dims(p);
  const float weights_scale_keep[2] = {grad_scale, grad_keep},
              bias_scale_keep[2] = {bias_grad_scale, grad_keep};
  assert(d.dx || !dx); /* the workspace has no room for it */
  float *panels = packed_filters(p, &d, ws), *dwt = transposed_weight_gradient(p, &d, ws);
  int unit;
  HostQueue images = image_queue(batch, d.flip ? d.nb : d.nb_col, swk_threads(), &unit);
#pragma omp parallel num_threads(swk_threads())
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), from, to;
    Scratch s = scratch(p, &d, ws, t);
    if (dx) {
      pack_filters(p, &d, w, true, t, nt, panels);
#pragma omp barrier
      while (take_images(&images, unit, batch, &from, &to))
        input_gradient(p, &d, from, to, panels, dy, dx, dx_add, s);
    }
    if (dw)
      weight_gradient(p, &d, batch, weight_block(&d, t, nt), x, dy, dwt, dw, weights_scale_keep, s);
    share(p->co, t, nt, &from, &to);
    if (db && p->bias) bias_gradient(&d, batch, from, to, dy, db, bias_scale_keep);
  }
}
