/* Implicit-GEMM convolution on the CPEs (swDNN's plan; args.h): no im2col. With the (R, C, N, B)
 * layout every pixel is a channels x batch matrix, and a convolution is a sum of products of
 * those with the filters' tap matrices (co x ci in (K, K, No, Ni) order), each done by the
 * register-communication-blocked product of gemm_cpe.h:
 *   forward  Y[o] (co x B)  = bias + sum over taps t inside the image of W_t X[in(o, t)]
 *   data     dX[i] (ci x B) (+)= sum over taps t whose output o(i, t) exists of W_t^T dY[o]
 *   weights  dW_t (co x ci) = sum over output pixels o with in(o, t) inside of dY[o] X[in]^T
 * The operand the products of a run share stays in LDM for the whole run: the forward and data
 * passes keep the C blocks of `run` pixels along a row and load each tap's filter block once for
 * them; the weight pass keeps `run` taps of a filter row and loads each dY[o] block once for
 * them. Each C block is read at most once and written once; the gather of the data gradient
 * means no two products write one element. Out-of-image taps are skipped. */
#include "args.h"
#include "gemm_cpe.h"

typedef struct Geometry {
  int64_t x_pixel, y_pixel; /* floats per pixel of the input and the output */
  int64_t tap;              /* floats per tap of the filters */
} Geometry;

static int shorter(int a, int b) { return a < b ? a : b; }

static void forward(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  Block x[SW_IMPLICIT_RUN_MAX];
  for (int ti = 0; ti < p->co; ti += 8 * t.bm)
    for (int tj = 0; tj < p->batch; tj += 8 * t.bn) {
      int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn; /* this CPE's C block */
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow0 = 0; ow0 < p->wo; ow0 += p->run) {
          int n = shorter(p->run, p->wo - ow0);
          float *y = p->out + ((int64_t)oh * p->wo + ow0) * g.y_pixel;
          for (int r = 0; r < n; r++)
            gemm_start(t, y + r * g.y_pixel, p->batch, p->co, p->batch, i0, j0, 0.0f, p->bias, 0, l, r);
          for (int i = 0; i < p->kh; i++) {
            int ih = sw_implicit_input(oh, i, p->sh, p->ph, p->h);
            for (int j = 0; j < p->kw && ih >= 0; j++) {
              int inside = 0;
              for (int r = 0; r < n; r++) {
                int iw = sw_implicit_input(ow0 + r, j, p->sw, p->pw, p->w);
                const float *xr = iw < 0 ? NULL : p->x + ((int64_t)ih * p->w + iw) * g.x_pixel;
                x[r] = (Block){xr, p->batch, p->ci, p->batch, 0};
                inside += iw >= 0;
              }
              if (!inside) continue;
              Block w = {p->filters + (i * p->kw + j) * g.tap, p->ci, p->co, p->ci, 0};
              gemm_accumulate(t, p->ci, &w, x, n, ti, tj, l);
            }
          }
          for (int r = 0; r < n; r++)
            gemm_store(y + r * g.y_pixel, p->batch, p->co, p->batch, i0, j0, gemm_c(t, l, r), t.bm, t.bn, l->tmp);
        }
    }
}

static void data_gradient(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  Block dy[SW_IMPLICIT_RUN_MAX];
  for (int ti = 0; ti < p->ci; ti += 8 * t.bm)
    for (int tj = 0; tj < p->batch; tj += 8 * t.bn) {
      int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn; /* this CPE's C block */
      for (int ih = 0; ih < p->h; ih++)
        for (int iw0 = 0; iw0 < p->w; iw0 += p->run) {
          int n = shorter(p->run, p->w - iw0);
          float *dx = p->out + ((int64_t)ih * p->w + iw0) * g.x_pixel;
          for (int r = 0; r < n; r++)
            gemm_start(t, dx + r * g.x_pixel, p->batch, p->ci, p->batch, i0, j0, p->add ? 1.0f : 0.0f, NULL, 0,
                       l, r);
          for (int i = 0; i < p->kh; i++) {
            int oh = sw_implicit_source(ih, i, p->sh, p->ph, p->ho);
            for (int j = 0; j < p->kw && oh >= 0; j++) {
              int sources = 0;
              for (int r = 0; r < n; r++) {
                int ow = sw_implicit_source(iw0 + r, j, p->sw, p->pw, p->wo);
                const float *dyr = ow < 0 ? NULL : p->dy + ((int64_t)oh * p->wo + ow) * g.y_pixel;
                dy[r] = (Block){dyr, p->batch, p->co, p->batch, 0};
                sources += ow >= 0;
              }
              if (!sources) continue;
              Block w = {p->filters + (i * p->kw + j) * g.tap, p->ci, p->ci, p->co, 1};
              gemm_accumulate(t, p->co, &w, dy, n, ti, tj, l);
            }
          }
          for (int r = 0; r < n; r++)
            gemm_store(dx + r * g.x_pixel, p->batch, p->ci, p->batch, i0, j0, gemm_c(t, l, r), t.bm, t.bn, l->tmp);
        }
    }
}

static void weight_gradient(const SwImplicitArgs *p, Geometry g, Tiles t, Ldm *l) {
  Block xt[SW_IMPLICIT_RUN_MAX];
  for (int ti = 0; ti < p->co; ti += 8 * t.bm)
    for (int tj = 0; tj < p->ci; tj += 8 * t.bn) {
      int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn; /* this CPE's C block */
      for (int i = 0; i < p->kh; i++)
        for (int first = 0; first < p->kw; first += p->run) {
          int n = shorter(p->run, p->kw - first);
          float *dw = p->out + (i * p->kw + first) * g.tap;
          for (int r = 0; r < n; r++) gemm_start(t, dw + r * g.tap, p->ci, p->co, p->ci, i0, j0, 0.0f, NULL, 0, l, r);
          for (int oh = 0; oh < p->ho; oh++) {
            int ih = sw_implicit_input(oh, i, p->sh, p->ph, p->h);
            for (int ow = 0; ow < p->wo && ih >= 0; ow++) {
              int inside = 0;
              for (int r = 0; r < n; r++) {
                int iw = sw_implicit_input(ow, first + r, p->sw, p->pw, p->w);
                const float *xr = iw < 0 ? NULL : p->x + ((int64_t)ih * p->w + iw) * g.x_pixel;
                xt[r] = (Block){xr, p->batch, p->batch, p->ci, 1};
                inside += iw >= 0;
              }
              if (!inside) continue;
              Block dy = {p->dy + ((int64_t)oh * p->wo + ow) * g.y_pixel, p->batch, p->co, p->batch, 0};
              gemm_accumulate(t, p->batch, &dy, xt, n, ti, tj, l);
            }
          }
          for (int r = 0; r < n; r++)
            gemm_store(dw + r * g.tap, p->ci, p->co, p->ci, i0, j0, gemm_c(t, l, r), t.bm, t.bn, l->tmp);
        }
    }
}

void sw_conv_implicit(void *arg) {
  SwImplicitArgs p;
  cpe_get(&p, arg, sizeof p);
  Geometry g = {(int64_t)p.ci * p.batch, (int64_t)p.co * p.batch, (int64_t)p.co * p.ci};
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, p.run);
  if (p.pass == SW_IMPLICIT_FORWARD) forward(&p, g, t, &l);
  else if (p.pass == SW_IMPLICIT_DATA) data_gradient(&p, g, t, &l);
  else weight_gradient(&p, g, t, &l);
  gemm_ldm_give(t, &l);
}
