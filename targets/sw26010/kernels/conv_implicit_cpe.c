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

/* The forward and data passes are one loop: C is a grid of pixels (the output's, or the
 * input's for the data gradient's gather), and each pixel's C block is the sum over taps of
 * A_t B[across(pixel, tap)], where across is the input pixel the tap reads (forward) or the
 * output pixel whose tap reads this one (gather); A_t is W_t, transposed for the gather. */
typedef struct PixelPass {
  int gather;
  float *c; /* c_h x c_w pixels of c_rows x batch */
  int c_rows, c_h, c_w;
  const float *b; /* the other side: b_h x b_w pixels of b_rows x batch */
  int b_rows, b_h, b_w;
  float beta;        /* 1: add to C */
  const float *bias; /* per row of C, or NULL */
} PixelPass;

static void pixel_pass(const SwImplicitArgs *p, const PixelPass *s, int64_t tap, Tiles t, Ldm *l) {
  int64_t c_pixel = (int64_t)s->c_rows * p->batch, b_pixel = (int64_t)s->b_rows * p->batch;
  Block b[SW_IMPLICIT_RUN_MAX];
  for (int ti = 0; ti < s->c_rows; ti += 8 * t.bm)
    for (int tj = 0; tj < p->batch; tj += 8 * t.bn) {
      int i0 = ti + _ROW * t.bm, j0 = tj + _COL * t.bn; /* this CPE's C block */
      for (int y = 0; y < s->c_h; y++)
        for (int x0 = 0; x0 < s->c_w; x0 += p->run) {
          int n = shorter(p->run, s->c_w - x0);
          float *c = s->c + ((int64_t)y * s->c_w + x0) * c_pixel;
          for (int r = 0; r < n; r++)
            gemm_start(t, c + r * c_pixel, p->batch, s->c_rows, p->batch, i0, j0, s->beta, s->bias,
                       0, l, r);
          for (int i = 0; i < p->kh; i++) {
            int by = sw_implicit_across(s->gather, y, i, p->sh, p->ph, s->b_h);
            for (int j = 0; j < p->kw && by >= 0; j++) {
              int present = 0;
              for (int r = 0; r < n; r++) {
                int bx = sw_implicit_across(s->gather, x0 + r, j, p->sw, p->pw, s->b_w);
                const float *br = bx < 0 ? NULL : s->b + ((int64_t)by * s->b_w + bx) * b_pixel;
                b[r] = (Block){br, p->batch, s->b_rows, p->batch, 0};
                present += bx >= 0;
              }
              if (!present) continue;
              Block a = {p->filters + (i * p->kw + j) * tap, p->ci, s->c_rows, s->b_rows,
                         s->gather};
              gemm_accumulate(t, s->b_rows, &a, b, n, ti, tj, l);
            }
          }
          for (int r = 0; r < n; r++)
            gemm_store(c + r * c_pixel, p->batch, s->c_rows, p->batch, i0, j0, gemm_c(t, l, r),
                       t.bm, t.bn, l->tmp);
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
          for (int r = 0; r < n; r++)
            gemm_start(t, dw + r * g.tap, p->ci, p->co, p->ci, i0, j0, 0.0f, NULL, 0, l, r);
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
              Block dy = {p->dy + ((int64_t)oh * p->wo + ow) * g.y_pixel, p->batch, p->co, p->batch,
                          0};
              gemm_accumulate(t, p->batch, &dy, xt, n, ti, tj, l);
            }
          }
          for (int r = 0; r < n; r++)
            gemm_store(dw + r * g.tap, p->ci, p->co, p->ci, i0, j0, gemm_c(t, l, r), t.bm, t.bn,
                       l->tmp);
        }
    }
}

void sw_conv_implicit(void *arg) {
  SwImplicitArgs p;
  cpe_get(&p, arg, sizeof p);
  Geometry g = {(int64_t)p.ci * p.batch, (int64_t)p.co * p.batch, (int64_t)p.co * p.ci};
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, p.run);
  if (p.pass == SW_IMPLICIT_WEIGHTS) {
    weight_gradient(&p, g, t, &l);
  } else {
    PixelPass forward = {0, p.out, p.co, p.ho, p.wo, p.x, p.ci, p.h, p.w, 0.0f, p.bias};
    PixelPass data = {1, p.out, p.ci, p.h, p.w, p.dy, p.co, p.ho, p.wo, p.add ? 1.0f : 0.0f, NULL};
    pixel_pass(&p, p.pass == SW_IMPLICIT_FORWARD ? &forward : &data, g.tap, t, &l);
  }
  gemm_ldm_give(t, &l);
}
