/* Implicit-GEMM convolution on the CPEs (swDNN's plan; args.h): no im2col. With the (R, C, N, B)
 * layout every pixel is a channels x batch matrix, and a convolution is a sum of products of
 * those with the filters' tap matrices (co x ci in (K, K, No, Ni) order), each done by the
 * register-communication-blocked product of gemm_cpe.h:
 *   forward  Y[o] (co x B)  = bias + sum over taps t inside the image of W_t X[in(o, t)]
 *   data     dX[i] (ci x B) (+)= sum over taps t whose output o(i, t) exists of W_t^T dY[o]
 *   weights  dW_t (co x ci) = sum over output pixels o with in(o, t) inside of dY[o] X[in]^T
 * Each C block is read at most once and written once; the gather of the data gradient means no
 * two products write one element. Padding is coordinate mapping: out-of-image taps are skipped. */
#include "args.h"
#include "gemm_cpe.h"

typedef struct Geometry {
  int64_t x_pixel, y_pixel; /* floats per pixel of the input and the output */
  int64_t tap;              /* floats per tap of the filters */
} Geometry;

/* The input pixel that tap (i, j) of output (oh, ow) reads, or -1 outside the image. */
static int64_t input_pixel(const SwImplicitArgs *p, int oh, int ow, int i, int j) {
  int ih = oh * p->sh - p->ph + i, iw = ow * p->sw - p->pw + j;
  return ih < 0 || ih >= p->h || iw < 0 || iw >= p->w ? -1 : (int64_t)ih * p->w + iw;
}

/* The output position whose tap k covers input position i, or -1. */
static int source_of(int i, int k, int stride, int pad, int out) {
  int t = i + pad - k;
  if (t < 0 || t % stride) return -1;
  t /= stride;
  return t < out ? t : -1;
}

static void forward(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  for (int ti = 0; ti < p->co; ti += 8 * t.bm)
    for (int tj = 0; tj < p->batch; tj += 8 * t.bn)
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow = 0; ow < p->wo; ow++) {
          float *y = p->out + ((int64_t)oh * p->wo + ow) * g.y_pixel;
          int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn;
          gemm_start(t, y, p->batch, p->co, p->batch, i0, j0, 0.0f, p->bias, 0, l);
          for (int i = 0; i < p->kh; i++)
            for (int j = 0; j < p->kw; j++) {
              int64_t in = input_pixel(p, oh, ow, i, j);
              if (in < 0) continue;
              Block w = {p->filters + (i * p->kw + j) * g.tap, p->ci, p->co, p->ci, 0};
              Block x = {p->x + in * g.x_pixel, p->batch, p->ci, p->batch, 0};
              gemm_accumulate(t, p->ci, &w, &x, ti, tj, l);
            }
          gemm_store(y, p->batch, p->co, p->batch, i0, j0, l->c, t.bm, t.bn, l->tmp);
        }
}

static void data_gradient(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  for (int ti = 0; ti < p->ci; ti += 8 * t.bm)
    for (int tj = 0; tj < p->batch; tj += 8 * t.bn)
      for (int ih = 0; ih < p->h; ih++)
        for (int iw = 0; iw < p->w; iw++) {
          float *dx = p->out + ((int64_t)ih * p->w + iw) * g.x_pixel;
          int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn;
          gemm_start(t, dx, p->batch, p->ci, p->batch, i0, j0, p->add ? 1.0f : 0.0f, NULL, 0, l);
          for (int i = 0; i < p->kh; i++) {
            int oh = source_of(ih, i, p->sh, p->ph, p->ho);
            for (int j = 0; j < p->kw && oh >= 0; j++) {
              int ow = source_of(iw, j, p->sw, p->pw, p->wo);
              if (ow < 0) continue;
              Block w = {p->filters + (i * p->kw + j) * g.tap, p->ci, p->ci, p->co, 1};
              Block dy = {p->dy + ((int64_t)oh * p->wo + ow) * g.y_pixel, p->batch, p->co, p->batch, 0};
              gemm_accumulate(t, p->co, &w, &dy, ti, tj, l);
            }
          }
          gemm_store(dx, p->batch, p->ci, p->batch, i0, j0, l->c, t.bm, t.bn, l->tmp);
        }
}

static void weight_gradient(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  for (int ti = 0; ti < p->co; ti += 8 * t.bm)
    for (int tj = 0; tj < p->ci; tj += 8 * t.bn)
      for (int i = 0; i < p->kh; i++)
        for (int j = 0; j < p->kw; j++) {
          float *dw = p->out + (i * p->kw + j) * g.tap;
          int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn;
          gemm_start(t, dw, p->ci, p->co, p->ci, i0, j0, 0.0f, NULL, 0, l);
          for (int oh = 0; oh < p->ho; oh++)
            for (int ow = 0; ow < p->wo; ow++) {
              int64_t in = input_pixel(p, oh, ow, i, j);
              if (in < 0) continue;
              Block dy = {p->dy + ((int64_t)oh * p->wo + ow) * g.y_pixel, p->batch, p->co, p->batch, 0};
              Block xt = {p->x + in * g.x_pixel, p->batch, p->batch, p->ci, 1};
              gemm_accumulate(t, p->batch, &dy, &xt, ti, tj, l);
            }
          gemm_store(dw, p->ci, p->co, p->ci, i0, j0, l->c, t.bm, t.bn, l->tmp);
        }
}

void sw_conv_implicit(void *arg) {
  SwImplicitArgs p;
  cpe_get(&p, arg, sizeof p);
  Geometry g = {(int64_t)p.ci * p.batch, (int64_t)p.co * p.batch, (int64_t)p.co * p.ci};
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t);
  if (p.pass == SW_IMPLICIT_FORWARD) forward(&p, g, t, &l);
  else if (p.pass == SW_IMPLICIT_DATA) data_gradient(&p, g, t, &l);
  else weight_gradient(&p, g, t, &l);
  gemm_ldm_give(t, &l);
}
