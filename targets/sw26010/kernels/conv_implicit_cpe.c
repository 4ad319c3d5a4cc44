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
 * means no two products write one element. Out-of-image taps are skipped.
 * The products run as gemm_pipeline's steps (a tap's slice for a run of pixels, or a pixel's slice
 * for a run of taps), double-buffered unless single_buffered. A run with no product at all (a
 * pixel no tap reaches) is written first, on its own: C's start (bias, beta C or 0) stored. */
#include "args.h"
#include "gemm_cpe.h"

_Static_assert((int)SW_IMPLICIT_RUN_MAX <= (int)GEMM_RUN_MAX, "gemm_cpe.h holds a run");

static int shorter(int a, int b) { return a < b ? a : b; }

/* The forward and data passes are one loop: C is a grid of pixels (the output's, or the
 * input's for the data gradient's gather), and each pixel's C block is the sum over taps of
 * A_t B[across(pixel, tap)], where across is the input pixel the tap reads (forward) or the
 * output pixel whose tap reads this one (gather); A_t is W_t, transposed for the gather.
 * Runs: (C tile, row y, pixels x0..x0+n) in that order; positions: the taps. */
typedef struct PixelPass {
  int gather;
  float *c; /* c_h x c_w pixels of c_rows x batch */
  int c_rows, c_h, c_w;
  const float *b; /* the other side: b_h x b_w pixels of b_rows x batch */
  int b_rows, b_h, b_w;
  float beta;        /* 1: add to C */
  const float *bias; /* per row of C, or NULL */
} PixelPass;

typedef struct PixelWalk {
  GemmWalk walk;
  const SwImplicitArgs *p;
  const PixelPass *s;
  int64_t tap_floats;
  Tiles t;
  int ti, tj, y, x0, tap;
} PixelWalk;

static int pixel_run_length(const PixelWalk *q) { return shorter(q->p->run, q->s->c_w - q->x0); }

/* The step of tap q->tap for the run's pixels. */
static bool tap_step(const GemmWalk *w, GemmStep *st) {
  const PixelWalk *q = (const PixelWalk *)w;
  const SwImplicitArgs *p = q->p;
  const PixelPass *s = q->s;
  int i = q->tap / p->kw, j = q->tap % p->kw, present = 0, n = pixel_run_length(q);
  int by = sw_implicit_across(s->gather, q->y, i, p->sh, p->ph, s->b_h);
  if (by < 0) return false;
  int64_t b_pixel = (int64_t)s->b_rows * p->batch;
  for (int r = 0; r < n; r++) {
    int bx = sw_implicit_across(s->gather, q->x0 + r, j, p->sw, p->pw, s->b_w);
    const float *br = bx < 0 ? NULL : s->b + ((int64_t)by * s->b_w + bx) * b_pixel;
    st->b[r] = (Block){br, p->batch, s->b_rows, p->batch, 0};
    present += bx >= 0;
  }
  st->a = (Block){p->filters + q->tap * q->tap_floats, p->ci, s->c_rows, s->b_rows, s->gather};
  st->runs = n, st->k = s->b_rows, st->k0 = w->k0, st->ti = q->ti, st->tj = q->tj;
  return present > 0;
}

static bool next_tap(GemmWalk *w) {
  PixelWalk *q = (PixelWalk *)w;
  return ++q->tap < q->p->kh * q->p->kw;
}

/* Pixels along the row, rows, C tiles. */
static bool next_pixels(GemmWalk *w) {
  PixelWalk *q = (PixelWalk *)w;
  q->tap = 0;
  if ((q->x0 += q->p->run) < q->s->c_w) return true;
  q->x0 = 0;
  if (++q->y < q->s->c_h) return true;
  q->y = 0;
  if ((q->tj += 8 * q->t.bn) < q->p->batch) return true;
  q->tj = 0;
  return (q->ti += 8 * q->t.bm) < q->s->c_rows;
}

static GemmRun pixels_run(const GemmWalk *w) {
  const PixelWalk *q = (const PixelWalk *)w;
  const PixelPass *s = q->s;
  int64_t c_pixel = (int64_t)s->c_rows * q->p->batch;
  return (GemmRun){.c = s->c + ((int64_t)q->y * s->c_w + q->x0) * c_pixel,
                   .step = c_pixel,
                   .n = pixel_run_length(q),
                   .ld = q->p->batch,
                   .rows = s->c_rows,
                   .cols = q->p->batch,
                   .ti = q->ti,
                   .tj = q->tj,
                   .beta = s->beta,
                   .bias = s->bias};
}

static void pixel_pass(const SwImplicitArgs *p, const PixelPass *s, int64_t tap, Tiles t, Ldm *l) {
  PixelWalk q = {.walk = {tap_step, next_tap, next_pixels, pixels_run, s->b_rows, t.bk, 0, false},
                 .p = p,
                 .s = s,
                 .tap_floats = tap,
                 .t = t};
  PixelWalk empty = q;
  gemm_write_runs_without_products(t, &empty.walk, l);
  gemm_pipeline(t, &q.walk, l);
}

/* The weight gradient: runs (C tile, filter row i, taps first..first+n); positions: the output
 * pixels, those whose input is inside the image for one of the run's taps with a product; the
 * inner dimension is the batch. */
typedef struct WeightWalk {
  GemmWalk walk;
  const SwImplicitArgs *p;
  int64_t x_pixel, y_pixel, tap_floats;
  Tiles t;
  int ti, tj, i, first, pixel;
} WeightWalk;

static int weight_run_length(const WeightWalk *q) {
  return shorter(q->p->run, q->p->kw - q->first);
}

static bool pixel_step(const GemmWalk *w, GemmStep *st) {
  const WeightWalk *q = (const WeightWalk *)w;
  const SwImplicitArgs *p = q->p;
  int oh = q->pixel / p->wo, ow = q->pixel % p->wo, n = weight_run_length(q), inside = 0;
  int ih = sw_implicit_input(oh, q->i, p->sh, p->ph, p->h);
  if (ih < 0) return false;
  for (int r = 0; r < n; r++) {
    int iw = sw_implicit_input(ow, q->first + r, p->sw, p->pw, p->w);
    const float *xr = iw < 0 ? NULL : p->x + ((int64_t)ih * p->w + iw) * q->x_pixel;
    st->b[r] = (Block){xr, p->batch, p->batch, p->ci, 1};
    inside += iw >= 0;
  }
  st->a = (Block){p->dy + (int64_t)q->pixel * q->y_pixel, p->batch, p->co, p->batch, 0};
  st->runs = n, st->k = p->batch, st->k0 = w->k0, st->ti = q->ti, st->tj = q->tj;
  return inside > 0;
}

static bool next_pixel(GemmWalk *w) {
  WeightWalk *q = (WeightWalk *)w;
  return ++q->pixel < q->p->ho * q->p->wo;
}

/* Taps along the filter row, filter rows, C tiles. */
static bool next_taps(GemmWalk *w) {
  WeightWalk *q = (WeightWalk *)w;
  q->pixel = 0;
  if ((q->first += q->p->run) < q->p->kw) return true;
  q->first = 0;
  if (++q->i < q->p->kh) return true;
  q->i = 0;
  if ((q->tj += 8 * q->t.bn) < q->p->ci) return true;
  q->tj = 0;
  return (q->ti += 8 * q->t.bm) < q->p->co;
}

static GemmRun taps_run(const GemmWalk *w) {
  const WeightWalk *q = (const WeightWalk *)w;
  const SwImplicitArgs *p = q->p;
  return (GemmRun){.c = p->out + (q->i * p->kw + q->first) * q->tap_floats,
                   .step = q->tap_floats,
                   .n = weight_run_length(q),
                   .ld = p->ci,
                   .rows = p->co,
                   .cols = p->ci,
                   .ti = q->ti,
                   .tj = q->tj};
}

static void weight_gradient(const SwImplicitArgs *p, Tiles t, Ldm *l) {
  WeightWalk q = {.walk = {pixel_step, next_pixel, next_taps, taps_run, p->batch, t.bk, 0, false},
                  .p = p,
                  .x_pixel = (int64_t)p->ci * p->batch,
                  .y_pixel = (int64_t)p->co * p->batch,
                  .tap_floats = (int64_t)p->co * p->ci,
                  .t = t};
  WeightWalk empty = q; /* taps no pixel reaches: dW 0 */
  gemm_write_runs_without_products(t, &empty.walk, l);
  gemm_pipeline(t, &q.walk, l);
}

void sw_conv_implicit(void *arg) {
  SwImplicitArgs p;
  cpe_get(&p, arg, sizeof p);
  Tiles t = {p.bm, p.bn, p.bk};
  Ldm l = gemm_ldm_take(t, p.run, p.single_buffered ? 1 : 2);
  if (p.pass == SW_IMPLICIT_WEIGHTS) {
    weight_gradient(&p, t, &l);
  } else {
    int64_t tap = (int64_t)p.co * p.ci;
    PixelPass forward = {0, p.out, p.co, p.ho, p.wo, p.x, p.ci, p.h, p.w, 0.0f, p.bias};
    PixelPass data = {1, p.out, p.ci, p.h, p.w, p.dy, p.co, p.ho, p.wo, p.add ? 1.0f : 0.0f, NULL};
    pixel_pass(&p, p.pass == SW_IMPLICIT_FORWARD ? &forward : &data, tap, t, &l);
  }
  gemm_ldm_give(t, &l);
}
