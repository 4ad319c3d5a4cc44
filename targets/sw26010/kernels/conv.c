/* Explicit-GEMM convolution on the CPEs, per group g (swCaffe, section 4):
 *   forward: col = im2col(x) for up to nb images (im2col_cpe.c), then one batched GEMM launch
 *            Y_i = W_g col_i (+ bias) over those images (gemm_cpe.c);
 *   dW_g = sum_i dY_i col_i^T, accumulated over the images in the CPEs' LDM;
 *   dX: dcol_i = W_g^T dY_i, then col2im (added into dX where asked);
 *   db: the CPEs' row sums of dY over images and pixels.
 * A pointwise filter (1x1, stride 1, no padding) has an image's columns as its input channels
 * stored: the GEMMs read x and write dX in place, no im2col, col2im or workspace (as Caffe's
 * 1x1 rule). */
#include "../cost/predict.h"
#include "mpe.h"

typedef struct Dims {
  int cig, cog, k, pixels, nb;
  int64_t in_image, out_image;
} Dims;

static bool pointwise(const SwkConv *p) {
  return sw_conv_pointwise(p->kh, p->kw, p->sh, p->sw, p->ph, p->pw);
}

static Dims dims(const SwkConv *p) {
  Dims d = {.cig = p->ci / p->groups, .cog = p->co / p->groups, .pixels = p->ho * p->wo};
  d.k = d.cig * p->kh * p->kw;
  d.nb = sw_conv_images_per_launch(d.k, d.pixels, pointwise(p));
  d.in_image = (int64_t)p->ci * p->h * p->w;
  d.out_image = (int64_t)p->co * d.pixels;
  return d;
}

size_t swk_conv_workspace(const SwkConv *p) {
  if (pointwise(p)) return 0;
  Dims d = dims(p);
  return (size_t)d.nb * (size_t)d.k * (size_t)d.pixels;
}

/* Group g's columns of images [first, first + n): in the workspace after im2col (image i's at
 * column i P), or x itself for a pointwise filter (image i's at x's image i). */
typedef struct Columns {
  float *at;
  int ld;
  int64_t image_stride;
} Columns;

static Columns columns_at(const SwkConv *p, const Dims *d, const float *x, int first, int n, int g,
                          float *ws) {
  SwConvColumns at = sw_conv_columns(pointwise(p), n, d->pixels, d->in_image);
  float *base =
      pointwise(p) ? (float *)x + first * d->in_image + (int64_t)g * d->cig * d->pixels : ws;
  return (Columns){base, at.ld, at.image_stride};
}

/* im2col (or col2im into x when `back`) of images [first, first + n) of group g. */
static void columns(const SwkConv *p, const Dims *d, bool back, const float *x, int first, int n,
                    int g, bool add, float *col) {
  SwIm2colArgs a = {.channels = d->cig,
                    SW_WINDOW_OF(p),
                    .dh = p->dh,
                    .dw = p->dw,
                    .images = n,
                    .first_channel = g * d->cig,
                    .add = add,
                    .in_image = d->in_image,
                    .ld = (int64_t)n * d->pixels,
                    .x = (float *)x + (int64_t)first * d->in_image,
                    .col = col};
  if (back)
    SW_RUN(sw_col2im, &a);
  else
    SW_RUN(sw_im2col, &a);
}

void swk_conv_forward(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                      float *y, float *ws) {
  Dims d = dims(p);
  for (int g = 0; g < p->groups; g++)
    for (int first = 0, n; first < batch; first += n) {
      n = batch - first < d.nb ? batch - first : d.nb;
      if (!pointwise(p)) columns(p, &d, false, x, first, n, g, false, ws);
      Columns col = columns_at(p, &d, x, first, n, g, ws);
      SwGemmArgs m =
          sw_conv_forward_gemm(d.cog, d.k, d.pixels, n, col.ld, col.image_stride, d.out_image);
      m.a = w + (int64_t)g * d.cog * d.k, m.b = col.at;
      m.c = y + first * d.out_image + (int64_t)g * d.cog * d.pixels;
      m.bias = p->bias ? b + g * d.cog : NULL;
      sw_gemm_buffering(&m, p->forward_tiling);
      sw_gemm_run(&m);
    }
}

static void weight_gradient(const SwkConv *p, const Dims *d, const float *dy, int first, int n,
                            int g, Columns col, float *dw) {
  SwGemmArgs m = sw_conv_weights_gemm(d->cog, d->k, d->pixels, n, col.ld, col.image_stride,
                                      d->out_image, first == 0 ? 0.0f : 1.0f);
  m.a = dy + first * d->out_image + (int64_t)g * d->cog * d->pixels, m.b = col.at;
  m.c = dw + (int64_t)g * d->cog * d->k;
  sw_gemm_buffering(&m, p->wgrad_tiling);
  sw_gemm_run(&m);
}

/* dcol = W^T dY; written (or added, when `add`) where col says. */
static void column_gradient(const SwkConv *p, const Dims *d, const float *w, const float *dy,
                            int first, int n, int g, Columns col, bool add) {
  SwGemmArgs m = sw_conv_columns_gemm(d->cog, d->k, d->pixels, n, col.ld, col.image_stride,
                                      d->out_image, add ? 1.0f : 0.0f);
  m.a = w + (int64_t)g * d->cog * d->k;
  m.b = dy + first * d->out_image + (int64_t)g * d->cog * d->pixels, m.c = col.at;
  sw_gemm_buffering(&m, p->dgrad_tiling);
  sw_gemm_run(&m);
}

void swk_conv_backward(const SwkConv *p, int batch, const float *x, const float *w, const float *dy,
                       float *dx, bool dx_add, float *dw, float *db, float grad_scale,
                       float bias_grad_scale, float grad_keep, float *ws) {
  sw_unfolded(grad_scale, bias_grad_scale, grad_keep);
  Dims d = dims(p);
  for (int g = 0; g < p->groups; g++)
    for (int first = 0, n; first < batch; first += n) {
      n = batch - first < d.nb ? batch - first : d.nb;
      if (dw) {
        if (!pointwise(p)) columns(p, &d, false, x, first, n, g, false, ws);
        weight_gradient(p, &d, dy, first, n, g, columns_at(p, &d, x, first, n, g, ws), dw);
      }
      if (dx) { /* pointwise: into dX itself */
        column_gradient(p, &d, w, dy, first, n, g, columns_at(p, &d, dx, first, n, g, ws),
                        pointwise(p) && dx_add);
        if (!pointwise(p)) columns(p, &d, true, dx, first, n, g, dx_add, ws);
      }
    }
  if (dw && db) {
    SwStreamArgs s = {.op = SW_ROW_BIAS_GRAD,
                      .a = dy,
                      .y = db,
                      .rows = p->co,
                      .cols = d.pixels,
                      .images = batch,
                      .image_stride = d.out_image};
    sw_stream_run(&s);
  }
}
