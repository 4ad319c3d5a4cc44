/* Every kernel's backward (of the kernel set linked: host, or sw26010 on its emulator)
 * against central finite differences of its forward, on small shapes that exercise groups,
 * padding, stride, ceil-mode pooling windows and fan-out (gradients added to, not written).
 * The objective is L = sum(y * r) for a fixed random r, so dL/dy = r is what backward
 * receives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "shapes.h"
#include "kernels.h"
#include "rng.h"

static uint64_t rng_state = 12345;
static float frand(void) { return swn_uniform(swn_mix64(rng_state++)) * 2.0f - 1.0f; }

static float *random_array(int64_t n) {
  float *a = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) a[i] = frand();
  return a;
}

static float *zeros(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(float)); }

/* ---------------------------------------------------------------------------------------- */
/* A kernel under test: forward computes y from the current inputs; objective is sum(y*r). */
typedef struct Case {
  void (*forward)(struct Case *c);
  float *y, *r;
  int64_t ny;
  void *p; /* kernel parameters */
  int batch;
  float *in[4]; /* inputs and parameters forward reads */
  float *ws;
  int32_t *idx, *labels;
  float *aux, *aux2;
} Case;

static double objective(Case *c) {
  c->forward(c);
  double s = 0;
  for (int64_t i = 0; i < c->ny; i++) s += (double)c->y[i] * c->r[i];
  return s;
}

/* Compares grad (analytic) with finite differences of objective w.r.t. x[0..n). */
static void check_gradient(const char *what, Case *c, float *x, int64_t n, const float *grad) {
  const float h = 1e-2f;
  int bad = 0, samples = n < 60 ? (int)n : 60;
  double worst = 0;
  for (int s = 0; s < samples; s++) {
    int64_t i = n <= 60 ? s : (int64_t)(swn_mix64((uint64_t)s * 7919 + (uint64_t)n) % (uint64_t)n);
    float keep = x[i];
    x[i] = keep + h;
    double up = objective(c);
    x[i] = keep - h;
    double down = objective(c);
    x[i] = keep;
    double numeric = (up - down) / (2 * h), err = fabs(numeric - grad[i]);
    double tol = 2e-3 + 2e-2 * fmax(fabs(numeric), fabs(grad[i]));
    if (err > tol) {
      if (bad++ < 3)
        fprintf(stderr, "  %s[%lld]: analytic %.6f numeric %.6f\n", what, (long long)i, grad[i],
                numeric);
    }
    if (err > worst) worst = err;
  }
  objective(c); /* leave forward state (saved buffers) consistent */
  if (bad) fprintf(stderr, "%s: %d of %d entries differ (worst %.2e)\n", what, bad, samples, worst);
  CHECK(bad == 0);
}

/* Checks that backward adds to a gradient when asked: run twice, once written, once added. */
static void check_adds(const char *what, const float *written, const float *added,
                       const float *before, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabsf(added[i] - (before[i] + written[i])) > 1e-5f * (1 + fabsf(added[i]))) bad++;
  if (bad) fprintf(stderr, "%s: %d entries not accumulated\n", what, bad);
  CHECK(bad == 0);
}

/* ---------------------------------------------------------------------------------------- */
static void conv_fwd(Case *c) {
  swk_conv_forward(c->p, c->batch, c->in[0], c->in[1], c->in[2], c->y, c->ws);
}

static int64_t conv_x_size(const SwkConv *p, int batch) {
  return (int64_t)batch * p->ci * p->h * p->w;
}
static int64_t conv_y_size(const SwkConv *p, int batch) {
  return (int64_t)batch * p->co * p->ho * p->wo;
}

/* (co, ci, kh, kw) -> (kh, kw, co, ci) and back */
static void filters_to_kkoi(const SwkConv *p, const float *w, float *t, bool back) {
  for (int o = 0; o < p->co; o++)
    for (int i = 0; i < p->ci; i++)
      for (int k = 0; k < p->kh * p->kw; k++) {
        size_t a = ((size_t)o * p->ci + i) * p->kh * p->kw + k,
               b = ((size_t)k * p->co + o) * p->ci + i;
        if (back)
          t[a] = w[b];
        else
          t[b] = w[a];
      }
}

static double max_abs(const float *a, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

static void check_close(const char *what, const float *a, const float *b, int64_t n) {
  double err = 0, scale = fmax(max_abs(b, n), 1e-6);
  for (int64_t i = 0; i < n; i++) err = fmax(err, fabs(a[i] - b[i]));
  if (err > 1e-5 * scale)
    fprintf(stderr, "%s: max difference %.3g (scale %.3g)\n", what, err, scale);
  CHECK(err <= 1e-5 * scale);
}

/* Backward with only dw or only dx asked for gives what the joint call gives. */
typedef void (*ConvBackward)(const SwkConv *p, int batch, const float *x, const float *w,
                             const float *dy, float *dx, bool dx_add, float *dw, float *db,
                             float grad_scale, float bias_grad_scale, float grad_keep, float *ws);

/* A parameter gradient stored as keep x old + scale x grad (pass fold-gradients), by a kernel
 * set that folds (FOLDS_GRADIENTS: its target description says so). */
#ifndef FOLDS_GRADIENTS
#define FOLDS_GRADIENTS 0
#endif
static void check_stored(const char *what, const float *got, const float *old, const float *grad,
                         int64_t n, float scale, float keep) {
  float *want = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) want[i] = keep * old[i] + scale * grad[i];
  check_close(what, got, want, n);
  free(want);
}
static void check_split_backward(const char *plan, ConvBackward backward, const SwkConv *p,
                                 int batch, const float *x, const float *w, const float *dy,
                                 const float *dx, const float *dw, const float *db, float *ws) {
  int64_t nx = conv_x_size(p, batch), nw = (int64_t)p->co * p->ci / p->groups * p->kh * p->kw;
  float *dx2 = zeros(nx), *dw2 = zeros(nw), *db2 = zeros(p->co);
  backward(p, batch, x, w, dy, NULL, false, dw2, db2, 1, 1, 0, ws);
  backward(p, batch, x, w, dy, dx2, false, NULL, NULL, 1, 1, 0, ws);
  char what[64];
  snprintf(what, sizeof what, "%s: dx alone", plan), check_close(what, dx2, dx, nx);
  snprintf(what, sizeof what, "%s: dw alone", plan), check_close(what, dw2, dw, nw);
  if (p->bias) snprintf(what, sizeof what, "%s: db alone", plan), check_close(what, db2, db, p->co);
  if (FOLDS_GRADIENTS) {
    float *old_w = random_array(nw), *old_b = random_array(p->co);
    memcpy(dw2, old_w, sizeof(float) * (size_t)nw);
    memcpy(db2, old_b, sizeof(float) * (size_t)p->co);
    backward(p, batch, x, w, dy, NULL, false, dw2, db2, 0.03f, 0.06f, 0.45f, ws);
    snprintf(what, sizeof what, "%s: dw into momentum", plan);
    check_stored(what, dw2, old_w, dw, nw, 0.03f, 0.45f);
    snprintf(what, sizeof what, "%s: db into momentum", plan);
    if (p->bias) check_stored(what, db2, old_b, db, p->co, 0.06f, 0.45f);
    free(old_w), free(old_b);
  }
  free(dx2), free(dw2), free(db2);
}

static void test_conv(SwkConv p, int batch) {
  int64_t nx = (int64_t)batch * p.ci * p.h * p.w,
          nw = (int64_t)p.co * (p.ci / p.groups) * p.kh * p.kw;
  Case c = {
      .forward = conv_fwd, .p = &p, .batch = batch, .ny = (int64_t)batch * p.co * p.ho * p.wo};
  c.in[0] = random_array(nx), c.in[1] = random_array(nw), c.in[2] = random_array(p.co);
  c.y = zeros(c.ny), c.r = random_array(c.ny), c.ws = zeros((int64_t)swk_conv_workspace(&p));
  float *dx = zeros(nx), *dw = zeros(nw), *db = zeros(p.co);
  conv_fwd(&c);
  swk_conv_backward(&p, batch, c.in[0], c.in[1], c.r, dx, false, dw, db, 1, 1, 0, c.ws);
  check_split_backward("explicit", swk_conv_backward, &p, batch, c.in[0], c.in[1], c.r, dx, dw, db,
                       c.ws);
  check_gradient("conv dx", &c, c.in[0], nx, dx);
  check_gradient("conv dw", &c, c.in[1], nw, dw);
  if (p.bias) check_gradient("conv db", &c, c.in[2], p.co, db);
  float *before = random_array(nx), *acc = malloc(sizeof(float) * (size_t)nx);
  memcpy(acc, before, sizeof(float) * (size_t)nx);
  swk_conv_backward(&p, batch, c.in[0], c.in[1], c.r, acc, true, dw, db, 1, 1, 0, c.ws);
  check_adds("conv dx_add", dx, acc, before, nx);
  /* a layer never asked for dX (the first) sizes a workspace of no more, and gets the same dW */
  SwkConv first = p;
  first.no_input_gradient = true;
  CHECK(swk_conv_workspace(&first) <= swk_conv_workspace(&p));
  float *dw_first = zeros(nw), *db_first = zeros(p.co);
  float *ws_first = zeros((int64_t)swk_conv_workspace(&first));
  swk_conv_backward(&first, batch, c.in[0], c.in[1], c.r, NULL, false, dw_first, db_first, 1, 1, 0,
                    ws_first);
  CHECK(!memcmp(dw_first, dw, sizeof(float) * (size_t)nw));
  free(dw_first), free(db_first), free(ws_first);
  free(before), free(acc), free(dx), free(dw), free(db);
  for (int i = 0; i < 3; i++) free(c.in[i]);
  free(c.y), free(c.r), free(c.ws);
}

/* Forward and both gradients of a convolution, by the definition, in double precision. */
static void reference_conv(const SwkConv *p, int batch, const float *x, const float *w,
                           const float *b, const float *dy, float *y, float *dx, float *dw,
                           float *db) {
  int cig = p->ci / p->groups, cog = p->co / p->groups;
  int64_t nx = conv_x_size(p, batch), nw = (int64_t)p->co * cig * p->kh * p->kw;
  double *gx = calloc((size_t)nx, sizeof(double)), *gw = calloc((size_t)nw, sizeof(double));
  for (int n = 0; n < batch; n++)
    for (int o = 0; o < p->co; o++)
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow = 0; ow < p->wo; ow++) {
          int64_t at = (((int64_t)n * p->co + o) * p->ho + oh) * p->wo + ow;
          double sum = p->bias ? b[o] : 0;
          for (int c = 0; c < cig; c++)
            for (int i = 0; i < p->kh; i++)
              for (int j = 0; j < p->kw; j++) {
                int ih = oh * p->sh - p->ph + i * p->dh, iw = ow * p->sw - p->pw + j * p->dw;
                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                int64_t xi = (((int64_t)n * p->ci + o / cog * cig + c) * p->h + ih) * p->w + iw;
                int64_t wi = (((int64_t)o * cig + c) * p->kh + i) * p->kw + j;
                sum += (double)x[xi] * w[wi];
                gx[xi] += (double)dy[at] * w[wi];
                gw[wi] += (double)dy[at] * x[xi];
              }
          y[at] = (float)sum;
          db[o] += dy[at];
        }
  for (int64_t i = 0; i < nx; i++) dx[i] = (float)gx[i];
  for (int64_t i = 0; i < nw; i++) dw[i] = (float)gw[i];
  free(gx), free(gw);
}

/* Shapes too large for finite differences to be sharp (one image's column matrix is wider than
 * the GEMM's blocks, K crosses a cache block mid-channel) against the definition. */
static void test_conv_large(SwkConv p, int batch) {
  int64_t nx = conv_x_size(&p, batch), ny = conv_y_size(&p, batch),
          nw = (int64_t)p.co * (p.ci / p.groups) * p.kh * p.kw;
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.co),
        *dy = random_array(ny), *ws = zeros((int64_t)swk_conv_workspace(&p));
  float *y = zeros(ny), *dx = zeros(nx), *dw = zeros(nw), *db = zeros(p.co);
  float *want_y = zeros(ny), *want_dx = zeros(nx), *want_dw = zeros(nw), *want_db = zeros(p.co);
  reference_conv(&p, batch, x, w, b, dy, want_y, want_dx, want_dw, want_db);
  swk_conv_forward(&p, batch, x, w, b, y, ws);
  swk_conv_backward(&p, batch, x, w, dy, dx, false, dw, db, 1, 1, 0, ws);
  check_close("large conv y", y, want_y, ny);
  check_close("large conv dx", dx, want_dx, nx);
  check_close("large conv dw", dw, want_dw, nw);
  if (p.bias) check_close("large conv db", db, want_db, p.co);
  float *all[] = {x, w, b, dy, ws, y, dx, dw, db, want_y, want_dx, want_dw, want_db};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void pool_fwd(Case *c) { swk_pool_forward(c->p, c->batch, c->in[0], c->y, c->idx); }

static void test_pool(SwkPool p, int batch) {
  int64_t nx = (int64_t)batch * p.c * p.h * p.w;
  Case c = {.forward = pool_fwd, .p = &p, .batch = batch, .ny = (int64_t)batch * p.c * p.ho * p.wo};
  c.in[0] = random_array(nx), c.y = zeros(c.ny), c.r = random_array(c.ny);
  c.idx = calloc((size_t)c.ny, sizeof(int32_t));
  if (p.max) /* distinct values further apart than the difference step: no argmax flips */
    for (int64_t i = 0; i < nx; i++) c.in[0][i] = (float)((i * 7919) % nx) * 0.03f - 1.0f;
  float *dx = zeros(nx);
  pool_fwd(&c);
  swk_pool_backward(&p, batch, c.r, c.idx, dx, false);
  check_gradient(p.max ? "maxpool dx" : "avgpool dx", &c, c.in[0], nx, dx);
  float *before = random_array(nx), *acc = malloc(sizeof(float) * (size_t)nx);
  memcpy(acc, before, sizeof(float) * (size_t)nx);
  swk_pool_backward(&p, batch, c.r, c.idx, acc, true);
  check_adds("pool dx_add", dx, acc, before, nx);
  free(before), free(acc), free(dx), free(c.in[0]), free(c.y), free(c.r), free(c.idx);
}

static void pool_rcnb_fwd(Case *c) {
  swk_pool_rcnb_forward(c->p, c->batch, c->in[0], c->y, c->idx);
}

/* The (R,C,N,B) kernels: finite differences, and the (B,N,R,C) kernels through transforms. */
static void test_pool_rcnb(SwkPool p, int batch) {
  int64_t nx = (int64_t)batch * p.c * p.h * p.w, ny = (int64_t)batch * p.c * p.ho * p.wo;
  Case c = {.forward = pool_rcnb_fwd, .p = &p, .batch = batch, .ny = ny};
  c.in[0] = random_array(nx), c.y = zeros(ny), c.r = random_array(ny);
  c.idx = calloc((size_t)ny, sizeof(int32_t));
  if (p.max)
    for (int64_t i = 0; i < nx; i++) c.in[0][i] = (float)((i * 7919) % nx) * 0.03f - 1.0f;
  float *dx = zeros(nx), *x = zeros(nx), *y = zeros(ny), *back = zeros(nx), *dy = zeros(ny),
        *dxb = zeros(nx);
  int32_t *idx = calloc((size_t)ny, sizeof(int32_t));
  pool_rcnb_fwd(&c);
  swk_pool_rcnb_backward(&p, batch, c.r, c.idx, dx, false);
  check_gradient(p.max ? "maxpool rcnb dx" : "avgpool rcnb dx", &c, c.in[0], nx, dx);
  swk_to_bnrc(p.c, p.h, p.w, batch, c.in[0], x, false);
  swk_pool_forward(&p, batch, x, y, idx);
  swk_to_rcnb(p.c, p.ho, p.wo, batch, y, dy, false);
  check_close("pool rcnb vs bnrc", c.y, dy, ny);
  swk_to_bnrc(p.c, p.ho, p.wo, batch, c.r, dy, false);
  swk_pool_backward(&p, batch, dy, idx, dxb, false);
  swk_to_rcnb(p.c, p.h, p.w, batch, dxb, back, false);
  check_close("pool rcnb dx vs bnrc", dx, back, nx);
  float *before = random_array(nx), *acc = malloc(sizeof(float) * (size_t)nx);
  memcpy(acc, before, sizeof(float) * (size_t)nx);
  swk_pool_rcnb_backward(&p, batch, c.r, c.idx, acc, true);
  check_adds("pool rcnb dx_add", dx, acc, before, nx);
  free(before), free(acc), free(dx), free(x), free(y), free(back), free(dy), free(dxb), free(idx);
  free(c.in[0]), free(c.y), free(c.r), free(c.idx);
}

static void pool_bnrc16_fwd(Case *c) {
  swk_pool_bnrc16_forward(c->p, c->batch, c->in[0], c->y, c->idx);
}

static int64_t blocked(int batch, int c, int hw) {
  return (int64_t)batch * ((c + 15) / 16) * 16 * hw;
}

/* The blocked layout's kernels: finite differences (over every lane), and the (B,N,R,C) kernels
 * through transforms. */
static void test_pool_bnrc16(SwkPool p, int batch) {
  int64_t n = (int64_t)batch * p.c * p.h * p.w, m = (int64_t)batch * p.c * p.ho * p.wo;
  int64_t nx = blocked(batch, p.c, p.h * p.w), ny = blocked(batch, p.c, p.ho * p.wo);
  Case c = {.forward = pool_bnrc16_fwd, .p = &p, .batch = batch, .ny = ny};
  c.in[0] = random_array(nx), c.y = zeros(ny), c.r = random_array(ny);
  c.idx = calloc((size_t)ny, sizeof(int32_t));
  if (p.max)
    for (int64_t i = 0; i < nx; i++) c.in[0][i] = (float)((i * 7919) % nx) * 0.03f - 1.0f;
  /* dx starts as garbage: the backward (not adding) writes every float of it */
  float *dx = random_array(nx), *x = zeros(n), *y = zeros(m), *got = zeros(m), *dy = zeros(m),
        *dxp = zeros(n), *back = zeros(n);
  int32_t *idx = calloc((size_t)m, sizeof(int32_t));
  pool_bnrc16_fwd(&c);
  swk_pool_bnrc16_backward(&p, batch, c.r, c.idx, dx, false);
  check_gradient(p.max ? "maxpool bnrc16 dx" : "avgpool bnrc16 dx", &c, c.in[0], nx, dx);
  swk_bnrc16_to_bnrc(p.c, p.h, p.w, batch, c.in[0], x, false);
  swk_pool_forward(&p, batch, x, y, idx);
  swk_bnrc16_to_bnrc(p.c, p.ho, p.wo, batch, c.y, got, false);
  check_close("pool bnrc16 vs bnrc", got, y, m);
  swk_bnrc16_to_bnrc(p.c, p.ho, p.wo, batch, c.r, dy, false);
  swk_pool_backward(&p, batch, dy, idx, dxp, false);
  swk_bnrc16_to_bnrc(p.c, p.h, p.w, batch, dx, back, false);
  check_close("pool bnrc16 dx vs bnrc", back, dxp, n);
  float *before = random_array(nx), *acc = malloc(sizeof(float) * (size_t)nx);
  memcpy(acc, before, sizeof(float) * (size_t)nx);
  swk_pool_bnrc16_backward(&p, batch, c.r, c.idx, acc, true);
  check_adds("pool bnrc16 dx_add", dx, acc, before, nx);
  free(before), free(acc), free(dx), free(x), free(y), free(got), free(dy), free(dxp), free(back);
  free(idx), free(c.in[0]), free(c.y), free(c.r), free(c.idx);
}

/* The direct plan through the kernel interface against the explicit plan, through the blocked
 * layout's transforms (both gradients, folded; added input gradient). */
static void test_conv_direct(SwkConv p, int batch) {
  int64_t nx = (int64_t)batch * p.ci * p.h * p.w, ny = (int64_t)batch * p.co * p.ho * p.wo,
          nw = (int64_t)p.co * p.ci * p.kh * p.kw;
  int64_t bx = blocked(batch, p.ci, p.h * p.w), by = blocked(batch, p.co, p.ho * p.wo);
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.co),
        *dy = random_array(ny), *y = zeros(ny), *dx = zeros(nx), *dw = zeros(nw), *db = zeros(p.co),
        *ws = zeros((int64_t)swk_conv_workspace(&p));
  float *xb = zeros(bx), *dyb = zeros(by), *yb = zeros(by), *dxb = zeros(bx), *got_y = zeros(ny),
        *got_dx = zeros(nx), *got_dw = zeros(nw), *got_db = zeros(p.co),
        *dws = zeros((int64_t)swk_conv_direct_workspace(&p));
  swk_conv_forward(&p, batch, x, w, b, y, ws);
  swk_conv_backward(&p, batch, x, w, dy, dx, false, dw, db, 1, 1, 0, ws);
  swk_to_bnrc16(p.ci, p.h, p.w, batch, x, xb, false);
  swk_to_bnrc16(p.co, p.ho, p.wo, batch, dy, dyb, false);
  swk_conv_direct_forward(&p, batch, xb, w, b, yb, dws);
  swk_bnrc16_to_bnrc(p.co, p.ho, p.wo, batch, yb, got_y, false);
  check_close("direct y", got_y, y, ny);
  bool has_dx = p.sh == 1 && p.sw == 1;
  swk_conv_direct_backward(&p, batch, xb, w, dyb, has_dx ? dxb : NULL, false, got_dw, got_db, 1, 1,
                           0, dws);
  check_close("direct dw", got_dw, dw, nw);
  if (p.bias) check_close("direct db", got_db, db, p.co);
  if (has_dx) {
    swk_bnrc16_to_bnrc(p.ci, p.h, p.w, batch, dxb, got_dx, false);
    check_close("direct dx", got_dx, dx, nx);
    swk_conv_direct_backward(&p, batch, xb, w, dyb, dxb, true, NULL, NULL, 1, 1, 0, dws);
    swk_bnrc16_to_bnrc(p.ci, p.h, p.w, batch, dxb, got_dx, false);
    for (int64_t i = 0; i < nx; i++) dx[i] *= 2;
    check_close("direct dx added", got_dx, dx, nx);
  }
  float *all[] = {x,  w,   b,  dy,  y,     dx,     dw,     db,     ws,
                  xb, dyb, yb, dxb, got_y, got_dx, got_dw, got_db, dws};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void fc_fwd(Case *c) {
  swk_fc_forward(c->p, c->batch, c->in[0], c->in[1], c->in[2], c->y, c->ws);
}

static void test_fc(SwkFc p, int batch) {
  int64_t nx = (int64_t)batch * p.in, nw = (int64_t)p.in * p.out;
  Case c = {.forward = fc_fwd, .p = &p, .batch = batch, .ny = (int64_t)batch * p.out};
  c.in[0] = random_array(nx), c.in[1] = random_array(nw), c.in[2] = random_array(p.out);
  c.y = zeros(c.ny), c.r = random_array(c.ny), c.ws = zeros((int64_t)swk_fc_workspace(&p));
  float *dx = zeros(nx), *dw = zeros(nw), *db = zeros(p.out);
  fc_fwd(&c);
  swk_fc_backward(&p, batch, c.in[0], c.in[1], c.r, dx, false, dw, db, 1, 1, 0, c.ws);
  check_gradient("fc dx", &c, c.in[0], nx, dx);
  check_gradient("fc dw", &c, c.in[1], nw, dw);
  if (FOLDS_GRADIENTS) {
    float *old_w = random_array(nw), *old_b = random_array(p.out), *vw = malloc(sizeof(float) * nw),
          *vb = malloc(sizeof(float) * p.out);
    memcpy(vw, old_w, sizeof(float) * nw), memcpy(vb, old_b, sizeof(float) * p.out);
    swk_fc_backward(&p, batch, c.in[0], c.in[1], c.r, NULL, false, vw, vb, 0.03f, 0.06f, 0.45f,
                    c.ws);
    check_stored("fc dw into momentum", vw, old_w, dw, nw, 0.03f, 0.45f);
    if (p.bias) check_stored("fc db into momentum", vb, old_b, db, p.out, 0.06f, 0.45f);
    free(old_w), free(old_b), free(vw), free(vb);
  }
  check_gradient("fc db", &c, c.in[2], p.out, db);
  free(dx), free(dw), free(db), free(c.in[0]), free(c.in[1]), free(c.in[2]), free(c.y), free(c.r);
  free(c.ws);
}

typedef void (*ActFwd)(const SwkAct *, int, const float *, float *);
typedef void (*ActBwd)(const SwkAct *, int, const float *, const float *, float *, bool);
static ActFwd act_forward;
static void act_fwd(Case *c) { act_forward(c->p, c->batch, c->in[0], c->y); }

/* One activation at parameter `slope`, on inputs over [-8, 8] (every piece of relu6's and
 * hardswish's) kept 0.1 away from the integers, where every kink of the table's rows lies
 * (0, 6, -3, 3): finite differences (h = 1e-2) straddle none. Backward reads x or y as its row
 * says (runtime/activations.h). */
static void test_activation(const char *name, bool reads_input, ActFwd fwd, ActBwd bwd,
                            float slope) {
  SwkAct p = {.n = 30, .slope = slope};
  int batch = 3;
  act_forward = fwd;
  Case c = {.forward = act_fwd, .p = &p, .batch = batch, .ny = 90};
  c.in[0] = random_array(90), c.y = zeros(90), c.r = random_array(90);
  for (int i = 0; i < 90; i++) {
    float x = 8 * c.in[0][i];
    c.in[0][i] = fabsf(x - roundf(x)) < 0.1f ? x + 0.25f : x;
  }
  float *dx = zeros(90);
  act_fwd(&c);
  const float *v = reads_input ? c.in[0] : c.y;
  bwd(&p, batch, v, c.r, dx, false);
  check_gradient(name, &c, c.in[0], 90, dx);
  float *before = random_array(90), acc[90];
  memcpy(acc, before, sizeof acc);
  bwd(&p, batch, v, c.r, acc, true);
  check_adds(name, dx, acc, before, 90);
  free(before), free(dx), free(c.in[0]), free(c.y), free(c.r);
}

/* Every row of runtime/activations.h, at parameters 0, 0.3 and 1 (relu's leaky slope, elu's
 * alpha; the others have none). */
static void test_activations(void) {
  static const float slopes[] = {0, 0.3f, 1};
  for (int k = 0; k < 3; k++) {
#define TEST_ACTIVATION(unused_a, unused_b, name, reads)                                           \
  test_activation(#name, SWN_READS_##reads, swk_##name##_forward, swk_##name##_backward, slopes[k]);
    SWN_ACTIVATIONS(TEST_ACTIVATION, , )
#undef TEST_ACTIVATION
  }
}

static void bn_fwd(Case *c) {
  const SwkBatchNorm *p = c->p;
  for (int i = 0; i < 2 * p->c; i++) c->aux2[i] = i < p->c ? 0.0f : 1.0f; /* fresh running stats */
  swk_batchnorm_forward(p, c->batch, true, c->in[0], c->in[1], c->in[2], c->y, c->aux, c->aux2);
}

/* frozen: the running statistics (fresh: 0 and 1) normalise in training too, stay as they are,
 * and are constants to backward */
static void test_batchnorm(bool frozen) {
  /* 37 pixels: two whole vectors of the sums' lanes and a remainder */
  SwkBatchNorm p = {
      .c = 3, .hw = 37, .eps = 1e-5f, .momentum = 0.9f, .affine = true, .frozen = frozen};
  int batch = 4;
  int64_t n = (int64_t)batch * p.c * p.hw;
  Case c = {.forward = bn_fwd, .p = &p, .batch = batch, .ny = n};
  c.in[0] = random_array(n), c.in[1] = random_array(p.c), c.in[2] = random_array(p.c);
  c.y = zeros(n), c.r = random_array(n), c.aux = zeros(2 * p.c), c.aux2 = zeros(2 * p.c);
  float *dx = zeros(n), *ds = zeros(p.c), *dsh = zeros(p.c);
  bn_fwd(&c);
  /* recomputing from the saved statistics gives the training forward's output bit for bit */
  float *again = zeros(n);
  swk_batchnorm_recompute(&p, batch, c.in[0], c.in[1], c.in[2], c.aux, again);
  CHECK(!memcmp(again, c.y, sizeof(float) * (size_t)n));
  free(again);
  swk_batchnorm_backward(&p, batch, c.in[0], c.in[1], c.r, c.aux, dx, false, ds, dsh, 1, 1, 0);
  check_gradient(frozen ? "frozen batchnorm dx" : "batchnorm dx", &c, c.in[0], n, dx);
  check_gradient(frozen ? "frozen batchnorm dscale" : "batchnorm dscale", &c, c.in[1], p.c, ds);
  check_gradient(frozen ? "frozen batchnorm dshift" : "batchnorm dshift", &c, c.in[2], p.c, dsh);
  if (FOLDS_GRADIENTS) {
    float *old = random_array(2 * p.c), *v = malloc(sizeof(float) * 2 * p.c);
    memcpy(v, old, sizeof(float) * 2 * p.c);
    swk_batchnorm_backward(&p, batch, c.in[0], c.in[1], c.r, c.aux, NULL, false, v, v + p.c, 0.03f,
                           0.06f, 0.45f);
    check_stored("batchnorm dscale into momentum", v, old, ds, p.c, 0.03f, 0.45f);
    check_stored("batchnorm dshift into momentum", v + p.c, old + p.c, dsh, p.c, 0.06f, 0.45f);
    free(old), free(v);
  }
  /* running statistics after one step from (0, 1): 0.1 * batch mean, 0.9 + 0.1 * unbiased var */
  double m = 0, v = 0;
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < p.hw; i++) m += c.in[0][b * p.c * p.hw + i];
  m /= batch * p.hw;
  for (int b = 0; b < batch; b++)
    for (int i = 0; i < p.hw; i++) v += pow(c.in[0][b * p.c * p.hw + i] - m, 2);
  v /= batch * p.hw - 1;
  if (frozen) m = 0, v = 1; /* so that the check below reads them unchanged */
  CHECK(fabs(c.aux2[0] - (frozen ? 1 : 0.1) * m) < 1e-5);
  CHECK(fabs(c.aux2[p.c] - (frozen ? v : 0.9 + 0.1 * v)) < 1e-5);
  if (frozen) CHECK(c.aux[0] == 0 && c.aux[p.c] == 1.0f / sqrtf(1 + p.eps));
  /* inference mode normalises with the running statistics */
  swk_batchnorm_forward(&p, batch, false, c.in[0], c.in[1], c.in[2], c.y, c.aux, c.aux2);
  int64_t at = 2 * p.c * p.hw + 1 * p.hw + 3; /* image 2, channel 1, pixel 3 */
  float expect =
      (c.in[0][at] - c.aux2[1]) / sqrtf(c.aux2[p.c + 1] + p.eps) * c.in[1][1] + c.in[2][1];
  CHECK(fabsf(c.y[at] - expect) < 1e-5f);
  free(dx), free(ds), free(dsh), free(c.in[0]), free(c.in[1]), free(c.in[2]), free(c.y), free(c.r),
      free(c.aux), free(c.aux2);
}

static void bn_bnrc16_fwd(Case *c) {
  const SwkBatchNorm *p = c->p;
  for (int i = 0; i < 2 * p->c; i++) c->aux2[i] = i < p->c ? 0.0f : 1.0f;
  swk_batchnorm_bnrc16_forward(p, c->batch, true, c->in[0], c->in[1], c->in[2], c->y, c->aux,
                               c->aux2);
}

/* The blocked layout's batch norm (18 channels: a block and 2 lanes of the next): finite
 * differences over the used lanes, recompute bit for bit, 0 in the unused lanes, and the
 * (B,N,R,C) kernels' results through transforms (statistics, y, dx, dscale, dshift). */
/* The blocked batch norm on tensors large enough to be streamed out (stream.h: over 4 MiB),
 * over a mean far from 0 (the statistics' one pass): y and dx as the (B,N,R,C) kernels give
 * them, and dx added to what is there (not streamed) as the written one plus it. */
static void test_batchnorm_bnrc16_streamed(void) {
  SwkBatchNorm p = {.c = 18, .hw = 2049, .eps = 1e-5f, .momentum = 0.9f, .affine = true};
  int batch = 16;
  int64_t n = (int64_t)batch * p.c * p.hw, nb = blocked(batch, p.c, p.hw);
  CHECK(nb * (int64_t)sizeof(float) > (4 << 20));
  float *x = random_array(n), *dy = random_array(n), *scale = random_array(p.c),
        *shift = random_array(p.c);
  for (int64_t i = 0; i < n; i++) x[i] += 100;
  /* outputs at a line's start, as the kernels stream them */
  size_t bytes = sizeof(float) * (size_t)nb;
  float *yb = aligned_alloc(64, bytes), *dxb = aligned_alloc(64, bytes);
  float *xb = zeros(nb), *dyb = zeros(nb), *sum = random_array(nb), *added = zeros(nb),
        *saved = zeros(2 * p.c), *running = zeros(2 * p.c), *ds = zeros(p.c), *dsh = zeros(p.c);
  swk_to_bnrc16(p.c, 1, p.hw, batch, x, xb, false);
  swk_to_bnrc16(p.c, 1, p.hw, batch, dy, dyb, false);
  swk_batchnorm_bnrc16_forward(&p, batch, true, xb, scale, shift, yb, saved, running);
  swk_batchnorm_bnrc16_backward(&p, batch, xb, scale, dyb, saved, dxb, false, ds, dsh, 1, 1, 0);
  memcpy(added, sum, sizeof(float) * (size_t)nb);
  swk_batchnorm_bnrc16_backward(&p, batch, xb, scale, dyb, saved, added, true, ds, dsh, 1, 1, 0);
  for (int64_t i = 0; i < nb; i++) sum[i] += dxb[i];
  check_close("streamed batchnorm dx added", added, sum, nb);
  float *y = zeros(n), *dx = zeros(n), *saved2 = zeros(2 * p.c), *running2 = zeros(2 * p.c),
        *got = zeros(n), *ds2 = zeros(p.c), *dsh2 = zeros(p.c);
  swk_batchnorm_forward(&p, batch, true, x, scale, shift, y, saved2, running2);
  swk_batchnorm_backward(&p, batch, x, scale, dy, saved2, dx, false, ds2, dsh2, 1, 1, 0);
  check_close("streamed batchnorm means", saved, saved2, p.c);
  check_close("streamed batchnorm 1/std", saved + p.c, saved2 + p.c, p.c);
  swk_bnrc16_to_bnrc(p.c, 1, p.hw, batch, yb, got, false);
  check_close("streamed batchnorm y", got, y, n);
  swk_bnrc16_to_bnrc(p.c, 1, p.hw, batch, dxb, got, false);
  check_close("streamed batchnorm dx", got, dx, n);
  float *all[] = {x,       dy, scale, shift, xb, dyb,    yb,       dxb, sum, added, saved,
                  running, ds, dsh,   y,     dx, saved2, running2, got, ds2, dsh2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void test_batchnorm_bnrc16(bool frozen) {
  SwkBatchNorm p = {
      .c = 18, .hw = 13, .eps = 1e-5f, .momentum = 0.9f, .affine = true, .frozen = frozen};
  int batch = 3;
  int64_t n = (int64_t)batch * p.c * p.hw, nb = blocked(batch, p.c, p.hw);
  Case c = {.forward = bn_bnrc16_fwd, .p = &p, .batch = batch, .ny = nb};
  float *x = random_array(n), *r = random_array(n);
  c.in[0] = zeros(nb), c.in[1] = random_array(p.c), c.in[2] = random_array(p.c);
  c.y = zeros(nb), c.r = zeros(nb), c.aux = zeros(2 * p.c), c.aux2 = zeros(2 * p.c);
  swk_to_bnrc16(p.c, 1, p.hw, batch, x, c.in[0], false);
  swk_to_bnrc16(p.c, 1, p.hw, batch, r, c.r, false);
  bn_bnrc16_fwd(&c);
  float *again = zeros(nb);
  swk_batchnorm_bnrc16_recompute(&p, batch, c.in[0], c.in[1], c.in[2], c.aux, again);
  CHECK(!memcmp(again, c.y, sizeof(float) * (size_t)nb));
  float *dx = random_array(nb), *ds = zeros(p.c), *dsh = zeros(p.c);
  swk_batchnorm_bnrc16_backward(&p, batch, c.in[0], c.in[1], c.r, c.aux, dx, false, ds, dsh, 1, 1,
                                0);
  int unused = 0;
  for (int64_t i = 0; i < nb; i++)
    unused += (i / (16 * p.hw)) % 2 == 1 && i % 16 >= 2 && (c.y[i] != 0 || dx[i] != 0);
  CHECK_EQ_INT(unused, 0);
  check_gradient("batchnorm bnrc16 dx", &c, c.in[0], nb, dx);
  check_gradient("batchnorm bnrc16 dscale", &c, c.in[1], p.c, ds);
  /* against (B,N,R,C) */
  float *y = zeros(n), *saved = zeros(2 * p.c), *running = zeros(2 * p.c), *dxp = zeros(n),
        *ds2 = zeros(p.c), *dsh2 = zeros(p.c), *got = zeros(n);
  for (int i = p.c; i < 2 * p.c; i++) running[i] = 1;
  swk_batchnorm_forward(&p, batch, true, x, c.in[1], c.in[2], y, saved, running);
  swk_batchnorm_backward(&p, batch, x, c.in[1], r, saved, dxp, false, ds2, dsh2, 1, 1, 0);
  swk_bnrc16_to_bnrc(p.c, 1, p.hw, batch, c.y, got, false);
  check_close("batchnorm bnrc16 y vs bnrc", got, y, n);
  check_close("batchnorm bnrc16 statistics", c.aux, saved, 2 * p.c);
  check_close("batchnorm bnrc16 running", c.aux2, running, 2 * p.c);
  swk_bnrc16_to_bnrc(p.c, 1, p.hw, batch, dx, got, false);
  check_close("batchnorm bnrc16 dx vs bnrc", got, dxp, n);
  check_close("batchnorm bnrc16 dscale vs bnrc", ds, ds2, p.c);
  check_close("batchnorm bnrc16 dshift vs bnrc", dsh, dsh2, p.c);
  float *all[] = {x,  r,  c.in[0], c.in[1], c.in[2], c.y,     c.r, c.aux, c.aux2, again,
                  dx, ds, dsh,     y,       saved,   running, dxp, ds2,   dsh2,   got};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void lrn_fwd(Case *c) { swk_lrn_forward(c->p, c->batch, c->in[0], c->y, c->aux); }

/* Every beta the kernel computes its own way (lrn_power.h: 0.75, 0.5, others by powf); 70
 * pixels cross its runs of 64. */
static void test_lrn(float beta, int hw) {
  SwkLrn p = {.c = 7, .hw = hw, .size = 5, .alpha = 0.5f, .beta = beta, .k = 1.0f};
  int batch = 2;
  int64_t n = (int64_t)batch * p.c * p.hw;
  Case c = {.forward = lrn_fwd, .p = &p, .batch = batch, .ny = n};
  c.in[0] = random_array(n), c.y = zeros(n), c.r = random_array(n), c.aux = zeros(n);
  float *dx = zeros(n);
  lrn_fwd(&c);
  swk_lrn_backward(&p, batch, c.in[0], c.y, c.aux, c.r, dx, false);
  check_gradient("lrn dx", &c, c.in[0], n, dx);
  free(dx), free(c.in[0]), free(c.y), free(c.r), free(c.aux);
}

static void dropout_fwd(Case *c) {
  swk_dropout_forward(c->p, c->batch, true, 5, 7, 100, c->in[0], c->y);
}

static void test_dropout(void) {
  SwkDropout p = {.n = 40, .ratio = 0.3f, .layer = 99};
  int batch = 3;
  Case c = {.forward = dropout_fwd, .p = &p, .batch = batch, .ny = 120};
  c.in[0] = random_array(120), c.y = zeros(120), c.r = random_array(120);
  float *dx = zeros(120);
  dropout_fwd(&c);
  swk_dropout_backward(&p, batch, 5, 7, 100, c.r, dx, false);
  check_gradient("dropout dx", &c, c.in[0], 120, dx);
  int kept = 0;
  for (int i = 0; i < 120; i++) kept += c.y[i] != 0;
  CHECK(kept > 60 && kept < 110); /* about 70% */
  /* the mask depends on the image's global index, not its place in this call */
  SwkDropout q = p;
  float y2[40];
  swk_dropout_forward(&q, 1, true, 5, 7, 101, c.in[0] + 40, y2);
  CHECK(memcmp(y2, c.y + 40, sizeof y2) == 0);
  free(dx), free(c.in[0]), free(c.y), free(c.r);
}

static int64_t concat_sizes[3] = {6, 4, 10};
static void concat_fwd(Case *c) {
  const float *x[3] = {c->in[0], c->in[1], c->in[2]};
  swk_concat_forward(3, concat_sizes, c->batch, x, c->y);
}
static void add_fwd(Case *c) {
  const float *x[3] = {c->in[0], c->in[1], c->in[2]};
  swk_add_forward(3, 10, c->batch, x, c->y, false, 0);
}

static void test_concat_and_add(void) {
  int batch = 3;
  Case c = {.forward = concat_fwd, .batch = batch, .ny = 60};
  for (int i = 0; i < 3; i++) c.in[i] = random_array(batch * concat_sizes[i]);
  c.y = zeros(60), c.r = random_array(60);
  float *dx[3] = {zeros(18), zeros(12), zeros(30)};
  bool add[3] = {false, false, false};
  concat_fwd(&c);
  swk_concat_backward(3, concat_sizes, batch, c.r, dx, add);
  check_gradient("concat dx0", &c, c.in[0], 18, dx[0]);
  check_gradient("concat dx1", &c, c.in[1], 12, dx[1]);
  check_gradient("concat dx2", &c, c.in[2], 30, dx[2]);
  for (int i = 0; i < 3; i++) free(c.in[i]), free(dx[i]);
  free(c.y), free(c.r);

  Case a = {.forward = add_fwd, .batch = batch, .ny = 30};
  for (int i = 0; i < 3; i++) a.in[i] = random_array(30);
  a.y = zeros(30), a.r = random_array(30);
  float *ax[3] = {zeros(30), NULL, NULL}; /* the second adds (below); the third needs none */
  float *before = random_array(30), keep[30];
  memcpy(keep, before, sizeof keep);
  ax[1] = before;
  bool aadd[3] = {false, true, false};
  add_fwd(&a);
  swk_add_backward(3, 10, batch, a.r, ax, aadd);
  check_gradient("add dx0", &a, a.in[0], 30, ax[0]);
  check_adds("add dx1 (fan-out)", ax[0], before, keep, 30);
  for (int i = 0; i < 3; i++) free(a.in[i]);
  free(ax[0]), free(before), free(a.y), free(a.r);
}

/* mul: x times s per channel (s_hw 1: squeeze-and-excitation) and element by element (s_hw =
 * hw); both gradients against finite differences, each also added to what is there. */
static int64_t mul_s_hw;
static void mul_fwd(Case *c) {
  swk_mul_forward(5, 6, mul_s_hw, c->batch, c->in[0], c->in[1], c->y);
}

static void test_mul(int64_t s_hw) {
  int batch = 3;
  int64_t n = batch * 5 * 6, ns = batch * 5 * s_hw;
  mul_s_hw = s_hw;
  Case c = {.forward = mul_fwd, .batch = batch, .ny = n};
  c.in[0] = random_array(n), c.in[1] = random_array(ns), c.y = zeros(n), c.r = random_array(n);
  float *dx = zeros(n), *ds = zeros(ns), *dx2 = random_array(n), *ds2 = random_array(ns);
  float *dx_before = malloc(sizeof(float) * (size_t)n),
        *ds_before = malloc(sizeof(float) * (size_t)ns);
  memcpy(dx_before, dx2, sizeof(float) * (size_t)n),
      memcpy(ds_before, ds2, sizeof(float) * (size_t)ns);
  mul_fwd(&c);
  swk_mul_backward(5, 6, s_hw, batch, c.in[0], c.in[1], c.r, dx, false, ds, false);
  check_gradient(s_hw == 1 ? "mul per channel dx" : "mul dx", &c, c.in[0], n, dx);
  check_gradient(s_hw == 1 ? "mul per channel ds" : "mul ds", &c, c.in[1], ns, ds);
  swk_mul_backward(5, 6, s_hw, batch, c.in[0], c.in[1], c.r, dx2, true, ds2, true);
  check_adds("mul dx added", dx, dx2, dx_before, n);
  check_adds("mul ds added", ds, ds2, ds_before, ns);
  float *only = zeros(ns); /* one gradient alone */
  swk_mul_backward(5, 6, s_hw, batch, c.in[0], c.in[1], c.r, NULL, false, only, false);
  CHECK(!memcmp(only, ds, sizeof(float) * (size_t)ns));
  free(c.in[0]), free(c.in[1]), free(c.y), free(c.r), free(dx), free(ds), free(dx2), free(ds2);
  free(dx_before), free(ds_before), free(only);
}

/* A (batch, c, 1, hw) tensor in the blocked layout, NaN in the unused lanes (never read). */
static float *blocked_copy(int c, int64_t hw, int batch, const float *x) {
  int blocks = (c + 15) / 16;
  float *b = malloc(sizeof(float) * (size_t)batch * (size_t)blocks * 16 * (size_t)hw);
  swk_to_bnrc16(c, 1, (int)hw, batch, x, b, false);
  for (int n = 0; n < batch; n++) /* the last block's lanes past c */
    for (int64_t q = 0; q < hw; q++)
      for (int l = c - (blocks - 1) * 16; l < 16; l++)
        b[(((int64_t)n * blocks + blocks - 1) * hw + q) * 16 + l] = NAN;
  return b;
}

static float *copy_of(const float *a, int64_t n) {
  float *b = malloc(sizeof(float) * (size_t)n);
  memcpy(b, a, sizeof(float) * (size_t)n);
  return b;
}

/* The blocked layout's mul against the plain kernels through the transforms, bit for bit (the
 * same products, each channel's sum in the same order), and 0 in the unused lanes. */
static void test_mul_bnrc16(int64_t s_hw) {
  int c = 20, batch = 3;
  int64_t hw = 6, n = batch * c * hw, ns = batch * c * s_hw, nb = batch * 32 * hw;
  float *x = random_array(n), *s = random_array(ns), *dy = random_array(n);
  float *y = zeros(n), *dx = zeros(n), *ds = zeros(ns);
  swk_mul_forward(c, hw, s_hw, batch, x, s, y);
  swk_mul_backward(c, hw, s_hw, batch, x, s, dy, dx, false, ds, false);
  float *xb = blocked_copy(c, hw, batch, x), *dyb = blocked_copy(c, hw, batch, dy);
  float *sb = s_hw == 1 ? s : blocked_copy(c, hw, batch, s);
  float *yb = zeros(nb), *dxb = zeros(nb), *dsb = zeros(s_hw == 1 ? ns : nb);
  swk_mul_bnrc16_forward(c, hw, s_hw, batch, xb, sb, yb);
  swk_mul_bnrc16_backward(c, hw, s_hw, batch, xb, sb, dyb, dxb, false, dsb, false);
  float *back = zeros(n);
  swk_bnrc16_to_bnrc(c, 1, (int)hw, batch, yb, back, false);
  CHECK(!memcmp(back, y, sizeof(float) * (size_t)n));
  swk_bnrc16_to_bnrc(c, 1, (int)hw, batch, dxb, back, false);
  CHECK(!memcmp(back, dx, sizeof(float) * (size_t)n));
  if (s_hw == 1) {
    CHECK(!memcmp(dsb, ds, sizeof(float) * (size_t)ns));
  } else {
    swk_bnrc16_to_bnrc(c, 1, (int)hw, batch, dsb, back, false);
    CHECK(!memcmp(back, ds, sizeof(float) * (size_t)n));
  }
  int unused_nonzero = 0; /* lanes 20..31 of the second block */
  for (int64_t i = 0; i < nb; i++)
    if ((i / (16 * hw)) % 2 == 1 && i % 16 >= 4)
      unused_nonzero += yb[i] != 0 || dxb[i] != 0 || (s_hw != 1 && dsb[i] != 0);
  CHECK(unused_nonzero == 0);
  float *dx2 = copy_of(dxb, nb),
        *ds2 = copy_of(dsb, s_hw == 1 ? ns : nb); /* added: twice the value */
  swk_mul_bnrc16_backward(c, hw, s_hw, batch, xb, sb, dyb, dx2, true, ds2, true);
  int wrong = 0;
  for (int64_t i = 0; i < nb; i++) wrong += dx2[i] != 2 * dxb[i];
  for (int64_t i = 0; i < (s_hw == 1 ? ns : nb); i++) wrong += ds2[i] != 2 * dsb[i];
  CHECK(wrong == 0);
  if (sb != s) free(sb);
  float *all[] = {x, s, dy, y, dx, ds, xb, dyb, yb, dxb, dsb, back, dx2, ds2};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

/* y = x + b per channel (the transposed convolution's bias): x copied, then the kernel. */
static void channel_bias_fwd(Case *c) {
  memcpy(c->y, c->in[0], sizeof(float) * (size_t)c->ny);
  swk_channel_bias_forward(5, 7, c->batch, c->in[1], c->y);
}

static void test_channel_bias(void) {
  int batch = 3;
  int64_t n = batch * 5 * 7;
  Case c = {.forward = channel_bias_fwd, .batch = batch, .ny = n};
  c.in[0] = random_array(n), c.in[1] = random_array(5), c.y = zeros(n), c.r = random_array(n);
  float *db = zeros(5), *kept = random_array(5), before[5];
  channel_bias_fwd(&c);
  swk_channel_bias_backward(5, 7, batch, c.r, db, 1, 0);
  check_gradient("channel bias db", &c, c.in[1], 5, db);
  memcpy(before, kept, sizeof before); /* the store rule: keep x old + scale x gradient */
  swk_channel_bias_backward(5, 7, batch, c.r, kept, 2, 0.5f);
  for (int k = 0; k < 5; k++) CHECK(fabsf(kept[k] - (0.5f * before[k] + 2 * db[k])) < 1e-5f);
  free(c.in[0]), free(c.in[1]), free(c.y), free(c.r), free(db), free(kept);
}

/* `fused` against `plain` through the ReLU kernel, bit for bit. */
/* With a ceiling (ReLU6's), the same values as the ReLU6 kernel's (its zeros are +0, the
 * epilogue's slope x v gives -0 below zero); else the same bits as the ReLU kernel's. */
static void check_relu_of(const char *what, float *plain, const float *fused, int64_t n,
                          float slope, float ceiling) {
  if (ceiling > 0) {
    swk_relu6_forward(&(SwkAct){.n = n}, 1, plain, plain);
    int wrong = 0, capped = 0;
    for (int64_t i = 0; i < n; i++) wrong += plain[i] != fused[i], capped += fused[i] == 6;
    if (wrong) printf("%s: the ReLU6 epilogue differs from the ReLU6 kernel\n", what);
    CHECK(wrong == 0 && capped > 0);
    return;
  }
  swk_relu_forward(&(SwkAct){.n = n, .slope = slope}, 1, plain, plain);
  if (memcmp(plain, fused, sizeof(float) * (size_t)n)) {
    printf("%s: the ReLU epilogue differs from the ReLU kernel\n", what);
    CHECK(false);
  }
}

/* A ReLU (or ReLU6) epilogue its kernels apply (SwkBatchNorm.relu in both layouts: training and evaluation
 * forward and recompute; swk_add_forward's relu): the op's output through the ReLU kernel. */
static void test_relu_epilogues(float slope, float ceiling) {
  int batch = 3;
  for (int blocked_layout = 0; blocked_layout < 2; blocked_layout++) {
    SwkBatchNorm p = {.c = 18, .hw = 13, .eps = 1e-5f, .momentum = 0.9f, .affine = true};
    SwkBatchNorm q = p;
    q.relu = true, q.relu_slope = slope, q.relu_ceiling = ceiling;
    int64_t n = blocked_layout ? blocked(batch, p.c, p.hw) : (int64_t)batch * p.c * p.hw;
    float *x = random_array(n), *scale = random_array(p.c), *shift = random_array(p.c);
    for (int c = 0; ceiling > 0 && c < p.c; c++) scale[c] *= 8; /* past the ceiling */
    float *plain = zeros(n), *fused = zeros(n), *saved = zeros(2 * p.c), *saved2 = zeros(2 * p.c);
    float *running = zeros(2 * p.c), *running2 = zeros(2 * p.c);
    __typeof__(swk_batchnorm_forward) *forward =
        blocked_layout ? swk_batchnorm_bnrc16_forward : swk_batchnorm_forward;
    __typeof__(swk_batchnorm_recompute) *recompute =
        blocked_layout ? swk_batchnorm_bnrc16_recompute : swk_batchnorm_recompute;
    for (int train = 1; train >= 0; train--) {
      forward(&p, batch, train, x, scale, shift, plain, saved, running);
      forward(&q, batch, train, x, scale, shift, fused, saved2, running2);
      check_relu_of(train ? "batch norm, training" : "batch norm, evaluation", plain, fused, n,
                    slope, ceiling);
    }
    forward(&p, batch, true, x, scale, shift, plain, saved, running);
    recompute(&q, batch, x, scale, shift, saved, fused);
    check_relu_of("batch norm, recompute", plain, fused, n, slope, ceiling);
    float *all[] = {x, scale, shift, plain, fused, saved, saved2, running, running2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  }
  /* sums of 2 and 3 inputs: the inputs added in order; outputs over 4 MiB are streamed */
  for (int big = 0; big < 2 && ceiling == 0; big++)
    for (int inputs = 2; inputs <= 3; inputs++) {
      int64_t size = big ? (1 << 19) + 5 : 70, n = batch * size;
      size_t bytes = (sizeof(float) * (size_t)n + 63) / 64 * 64;
      float *x[3], *plain = aligned_alloc(64, bytes), *fused = aligned_alloc(64, bytes);
      for (int i = 0; i < 3; i++) x[i] = random_array(n);
      swk_add_forward(inputs, size, batch, (const float *const *)x, plain, false, 0);
      int wrong = 0;
      for (int64_t k = 0; k < n; k++) {
        float sum = x[0][k] + x[1][k];
        if (inputs == 3) sum += x[2][k];
        wrong += plain[k] != sum;
      }
      CHECK_EQ_INT(wrong, 0);
      swk_add_forward(inputs, size, batch, (const float *const *)x, fused, true, slope);
      check_relu_of("add", plain, fused, n, slope, 0);
      for (int i = 0; i < 3; i++) free(x[i]);
      free(plain), free(fused);
    }
}

static void loss_fwd(Case *c) {
  swk_softmax_loss_forward(c->p, c->batch, c->in[0], c->labels, c->aux, c->y);
}

/* With label smoothing eps (0: plain cross-entropy). */
static void test_softmax_loss(float eps) {
  SwkSoftmaxLoss p = {.classes = 5, .loss_weight = 1.5f, .label_smoothing = eps};
  int batch = 4;
  int32_t labels[4] = {0, 4, 2, 2};
  float loss, one = 1;
  Case c = {.forward = loss_fwd, .p = &p, .batch = batch, .ny = 1, .labels = labels};
  c.in[0] = random_array(20), c.y = &loss, c.r = &one, c.aux = zeros(20);
  float *ds = zeros(20);
  loss_fwd(&c);
  swk_softmax_loss_backward(&p, batch, c.aux, labels, ds, false);
  check_gradient("softmax_loss dscores", &c, c.in[0], 20, ds);
  /* the loss of uniform scores is log(classes), smoothed or not */
  float flat[20] = {0};
  swk_softmax_loss_forward(&p, batch, flat, labels, c.aux, &loss);
  CHECK(fabsf(loss - 1.5f * logf(5)) < 1e-5f);
  /* one image by the definition: (1 - eps) (-log p_label) + eps mean(-log p_c) */
  float scores[5] = {1, -2, 0.5f, 3, 0}, prob[5];
  int32_t label = 2;
  swk_softmax_loss_forward(&p, 1, scores, &label, prob, &loss);
  double sum = 0, mean = 0;
  for (int k = 0; k < 5; k++) sum += exp(scores[k]);
  for (int k = 0; k < 5; k++) mean -= (scores[k] - log(sum)) / 5;
  double want = 1.5 * ((1 - eps) * -(scores[2] - log(sum)) + eps * mean);
  CHECK(fabs(loss - want) < 1e-5 * fabs(want));
  free(ds), free(c.in[0]), free(c.aux);
}

static void test_accuracy_and_sgd(void) {
  float scores[3 * 4] = {0.1f, 0.9f, 0.3f, 0.2f,  /* label 1: top-1 */
                         0.5f, 0.1f, 0.4f, 0.0f,  /* label 2: second */
                         0.2f, 0.2f, 0.2f, 0.2f}; /* label 3: ties go to lower indices: fourth */
  int32_t labels[3] = {1, 2, 3};
  float acc;
  swk_accuracy_forward(4, 1, 3, scores, labels, &acc);
  CHECK(fabsf(acc - 1.0f / 3) < 1e-6f);
  swk_accuracy_forward(4, 2, 3, scores, labels, &acc);
  CHECK(fabsf(acc - 2.0f / 3) < 1e-6f);
  swk_accuracy_forward(4, 4, 3, scores, labels, &acc);
  CHECK(acc == 1.0f);
  /* not a number: the label's own score is wrong at any k; another class's beats the label */
  scores[1] = NAN;
  swk_accuracy_forward(4, 4, 3, scores, labels, &acc);
  CHECK(fabsf(acc - 2.0f / 3) < 1e-6f);
  scores[1] = 0.9f, scores[5] = NAN;
  swk_accuracy_forward(4, 1, 3, scores, labels, &acc);
  CHECK(fabsf(acc - 1.0f / 3) < 1e-6f);
  swk_accuracy_forward(4, 2, 3, scores, labels, &acc);
  CHECK(fabsf(acc - 1.0f / 3) < 1e-6f);
  float w[2] = {1, -2}, g[2] = {0.5f, 0.25f}, v[2] = {0.1f, 0};
  swk_sgd_update(2, 0.1f, 0.01f, 0.9f, w, g, v);
  CHECK(fabsf(v[0] - (0.09f + 0.1f * (0.5f + 0.01f))) < 1e-7f);
  CHECK(fabsf(w[1] - (-2 - 0.1f * (0.25f - 0.02f))) < 1e-6f);
  /* the same step on momentum that backward already added 0.9 v + lr g into (fold-gradients) */
  float wf[2] = {1, -2}, vf[2] = {0.9f * 0.1f + 0.1f * 0.5f, 0.1f * 0.25f};
  swk_sgd_apply(2, 0.1f, 0.01f, wf, vf);
  CHECK(fabsf(vf[0] - v[0]) < 1e-7f && fabsf(vf[1] - v[1]) < 1e-7f);
  CHECK(fabsf(wf[0] - w[0]) < 1e-6f && fabsf(wf[1] - w[1]) < 1e-6f);
  /* LARS: the SGD step at lr x trust |w| / (|g| + decay |w|), against the formula in double;
   * a tensor of zero weights (or gradients) at the global rate */
  enum { LN = 1001 };
  static float lw[LN], lg[LN], lv[LN], rw[LN], rv[LN];
  double ww = 0, gg = 0;
  for (int i = 0; i < LN; i++) {
    lw[i] = rw[i] = 0.01f * (float)(i % 17) - 0.08f, lg[i] = 0.001f * (float)(i % 5) - 0.002f;
    lv[i] = rv[i] = 0.0001f * (float)(i % 3);
    ww += (double)lw[i] * lw[i], gg += (double)lg[i] * lg[i];
  }
  double local = 0.02 * sqrt(ww) / (sqrt(gg) + 5e-4 * sqrt(ww)), worst = 0;
  swk_lars_update(LN, 0.1f, 5e-4f, 0.9f, 0.02f, lw, lg, lv);
  for (int i = 0; i < LN; i++) {
    double v = 0.9 * rv[i] + 0.1 * local * (lg[i] + 5e-4 * rw[i]), w = rw[i] - v;
    worst = fmax(worst, fmax(fabs(lv[i] - v) / 1e-4, fabs(lw[i] - w) / 0.1));
  }
  CHECK(worst < 1e-5);
  CHECK(fabs(local - 1) > 0.2); /* the trust ratio (0.68) is far from 1: the test can tell */
  float zw[2] = {0, 0}, zg[2] = {0.5f, -1}, zv[2] = {0, 0};
  swk_lars_update(2, 0.1f, 0, 0.9f, 0.02f, zw, zg, zv);
  CHECK(zv[0] == 0.1f * 0.5f && zw[1] == -0.1f * -1);
  /* EASGD, 3 ranks: g += rho (w - c); c += eta rho (sum - 3 c) */
  float mine[2] = {1, 2}, sum[2] = {3, 9}, center[2] = {0.5f, 4}, grad[2] = {0.1f, -0.1f};
  swk_easgd_elastic(2, 0.1f, 0.5f, 3, mine, sum, center, grad);
  CHECK(fabsf(grad[0] - (0.1f + 0.5f * 0.5f)) < 1e-7f &&
        fabsf(grad[1] - (-0.1f - 0.5f * 2)) < 1e-6f);
  CHECK(fabsf(center[0] - (0.5f + 0.05f * (3 - 1.5f))) < 1e-7f &&
        fabsf(center[1] - (4 + 0.05f * (9 - 12))) < 1e-6f);
}

static void upsample_fwd(Case *c) { swk_upsample_forward(c->p, c->batch, c->in[0], c->y); }

/* Upsampling: a 2 x 2 plane by its definition (PyTorch's values), then finite differences and
 * accumulation on odd shapes and unequal factors. */
static void test_upsample(bool bilinear, int sh, int sw) {
  SwkUpsample small = {.c = 1, .h = 2, .w = 2, .sh = 2, .sw = 2, .bilinear = bilinear};
  float plane[4] = {1, 2, 3, 4}, out[16];
  swk_upsample_forward(&small, 1, plane, out);
  const float nearest[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  const float linear[16] = {1,    1.25f, 1.75f, 2,    1.5f, 1.75f, 2.25f, 2.5f,
                            2.5f, 2.75f, 3.25f, 3.5f, 3,    3.25f, 3.75f, 4};
  for (int i = 0; i < 16; i++) CHECK(fabsf(out[i] - (bilinear ? linear : nearest)[i]) < 1e-6f);
  SwkUpsample p = {.c = 3, .h = 5, .w = 4, .sh = sh, .sw = sw, .bilinear = bilinear};
  int batch = 2;
  int64_t nx = (int64_t)batch * p.c * p.h * p.w, ny = nx * sh * sw;
  Case c = {.forward = upsample_fwd, .p = &p, .batch = batch, .ny = ny};
  c.in[0] = random_array(nx), c.y = zeros(ny), c.r = random_array(ny);
  float *dx = zeros(nx), *dx2 = random_array(nx), *before = malloc(sizeof(float) * (size_t)nx);
  memcpy(before, dx2, sizeof(float) * (size_t)nx);
  upsample_fwd(&c);
  swk_upsample_backward(&p, batch, c.r, dx, false);
  check_gradient(bilinear ? "bilinear upsample dx" : "nearest upsample dx", &c, c.in[0], nx, dx);
  swk_upsample_backward(&p, batch, c.r, dx2, true);
  check_adds("upsample dx added", dx, dx2, before, nx);
  free(c.in[0]), free(c.y), free(c.r), free(dx), free(dx2), free(before);
}

static void softmax_fwd(Case *c) { swk_softmax_forward(c->p, c->batch, c->in[0], c->y); }

/* Softmax: each pixel's channels sum to 1 in the ratios of their exponentials (a shift by
 * 1000 overflows nothing); finite differences and accumulation. */
static void test_softmax(int64_t inner) {
  SwkSoftmax p = {.c = 5, .inner = inner};
  int batch = 3;
  int64_t n = batch * p.c * inner;
  Case c = {.forward = softmax_fwd, .p = &p, .batch = batch, .ny = n};
  c.in[0] = random_array(n), c.y = zeros(n), c.r = random_array(n);
  for (int64_t i = 0; i < inner; i++) c.in[0][i] += 1000; /* image 0, channel 0 */
  softmax_fwd(&c);
  for (int b = 0; b < batch; b++)
    for (int64_t i = 0; i < inner; i++) {
      const float *x = c.in[0] + b * p.c * inner + i, *y = c.y + b * p.c * inner + i;
      double sum = 0;
      for (int k = 0; k < p.c; k++) sum += y[k * inner];
      CHECK(fabs(sum - 1) < 1e-5);
      CHECK(fabsf(y[inner] / y[0] - expf(x[inner] - x[0])) < 1e-4f * (1 + y[inner] / y[0]));
    }
  for (int64_t i = 0; i < inner; i++) c.in[0][i] -= 1000;
  float *dx = zeros(n), *dx2 = random_array(n), *before = malloc(sizeof(float) * (size_t)n);
  memcpy(before, dx2, sizeof(float) * (size_t)n);
  softmax_fwd(&c);
  swk_softmax_backward(&p, batch, c.y, c.r, dx, false);
  check_gradient(inner == 1 ? "softmax dx" : "softmax per pixel dx", &c, c.in[0], n, dx);
  swk_softmax_backward(&p, batch, c.y, c.r, dx2, true);
  check_adds("softmax dx added", dx, dx2, before, n);
  free(c.in[0]), free(c.y), free(c.r), free(dx), free(dx2), free(before);
}

/* Adam and AdamW against Algorithm 1 of Kingma and Ba in double, three steps (the bias
 * corrections change each step); and clipping's sum of squares. */
static void test_adam(bool decoupled) {
  enum { N = 1003 };
  static float w[N], g[N], m[N], v[N];
  static double rw[N], rm[N], rv[N];
  for (int i = 0; i < N; i++) {
    w[i] = 0.02f * (float)(i % 13) - 0.1f, rw[i] = w[i];
    m[i] = v[i] = 0, rm[i] = rv[i] = 0;
  }
  const double lr = 0.01, decay = 0.05, b1 = 0.8, b2 = 0.99, eps = 1e-6;
  double worst = 0;
  for (uint64_t step = 0; step < 3; step++) {
    for (int i = 0; i < N; i++) g[i] = 0.001f * (float)((i * 7 + (int)step) % 11) - 0.004f;
    swk_adam_update(N, (float)lr, (float)decay, (float)b1, (float)b2, (float)eps, decoupled, step,
                    w, g, m, v);
    double t = (double)step + 1, c1 = 1 - pow(b1, t), c2 = 1 - pow(b2, t);
    for (int i = 0; i < N; i++) {
      double grad = g[i] + (decoupled ? 0 : decay * rw[i]);
      rm[i] = b1 * rm[i] + (1 - b1) * grad, rv[i] = b2 * rv[i] + (1 - b2) * grad * grad;
      if (decoupled) rw[i] *= 1 - lr * decay;
      rw[i] -= lr * (rm[i] / c1) / (sqrt(rv[i] / c2) + eps);
      worst = fmax(worst, fabs(w[i] - rw[i]) / lr);
      worst = fmax(worst, fmax(fabs(m[i] - rm[i]) / 4e-3, fabs(v[i] - rv[i]) / 1.6e-5));
    }
  }
  CHECK(worst < 1e-4);
  /* decoupled decay differs from L2 in the gradient: the test tells them apart */
  float a[1] = {1}, b[1] = {1}, ga[1] = {0}, ma[2] = {0, 0}, va[2] = {0, 0};
  swk_adam_update(1, 0.1f, 0.5f, 0.9f, 0.999f, 1e-8f, false, 0, a, ga, &ma[0], &va[0]);
  swk_adam_update(1, 0.1f, 0.5f, 0.9f, 0.999f, 1e-8f, true, 0, b, ga, &ma[1], &va[1]);
  CHECK(fabsf(a[0] - (1 - 0.1f)) < 1e-5f && fabsf(b[0] - (1 - 0.05f)) < 1e-6f);
  double sq = 0;
  for (int i = 0; i < N; i++) sq += (double)g[i] * g[i];
  CHECK(fabs(swk_sum_squares(N, g) - sq) <= 1e-12 * sq && swk_sum_squares(0, g) == 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Implicit-GEMM convolution on (R,C,N,B): against the explicit plan and finite differences. */

static void implicit_fwd(Case *c) {
  float *own = zeros((int64_t)swk_conv_implicit_workspace(c->p, c->batch));
  swk_conv_implicit_forward(c->p, c->batch, c->in[0], c->in[1], c->in[2], c->y, own);
  free(own);
}

static void implicit_backward(const SwkConv *p, int batch, const float *x, const float *w,
                              const float *dy, float *dx, bool dx_add, float *dw, float *db,
                              float grad_scale, float bias_grad_scale, float grad_keep, float *ws) {
  (void)ws;
  float *own = zeros((int64_t)swk_conv_implicit_workspace(p, batch));
  swk_conv_implicit_backward(p, batch, x, w, dy, dx, dx_add, dw, db, grad_scale, bias_grad_scale,
                             grad_keep, own);
  free(own);
}

/* kkoi: the implicit plan reads (K,K,No,Ni) filters, else the (No,Ni,K,K) the explicit one reads. */
static void test_conv_implicit(SwkConv p, int batch, bool kkoi) {
  int64_t nx = conv_x_size(&p, batch), ny = conv_y_size(&p, batch),
          nw = (int64_t)p.co * p.ci * p.kh * p.kw;
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.co),
        *dy = random_array(ny);
  float *ws = zeros((int64_t)swk_conv_workspace(&p)), *y = zeros(ny), *dx = zeros(nx),
        *dw = zeros(nw), *db = zeros(p.co);
  swk_conv_forward(&p, batch, x, w, b, y, ws);
  swk_conv_backward(&p, batch, x, w, dy, dx, false, dw, db, 1, 1, 0, ws);
  check_split_backward("explicit", swk_conv_backward, &p, batch, x, w, dy, dx, dw, db, ws);
  /* the same in (R,C,N,B) */
  p.filters_kkoi = kkoi;
  float *xr = zeros(nx), *wr = zeros(nw), *yr = zeros(ny), *dyr = zeros(ny), *dxr = zeros(nx),
        *dwr = zeros(nw);
  float *dbr = zeros(p.co), *back = zeros(nx > ny ? nx : ny), *wback = zeros(nw);
  swk_to_rcnb(p.ci, p.h, p.w, batch, x, xr, false);
  swk_to_rcnb(p.co, p.ho, p.wo, batch, dy, dyr, false);
  if (kkoi)
    filters_to_kkoi(&p, w, wr, false);
  else
    memcpy(wr, w, sizeof(float) * (size_t)nw);
  float *iws = zeros((int64_t)swk_conv_implicit_workspace(&p, batch));
  swk_conv_implicit_forward(&p, batch, xr, wr, b, yr, iws);
  free(iws);
  swk_to_bnrc(p.co, p.ho, p.wo, batch, yr, back, false);
  check_close("implicit forward vs explicit", back, y, ny);
  implicit_backward(&p, batch, xr, wr, dyr, dxr, false, dwr, dbr, 1, 1, 0, NULL);
  swk_to_bnrc(p.ci, p.h, p.w, batch, dxr, back, false);
  check_close("implicit dx vs explicit", back, dx, nx);
  if (kkoi)
    filters_to_kkoi(&p, dwr, wback, true);
  else
    memcpy(wback, dwr, sizeof(float) * (size_t)nw);
  check_close("implicit dw vs explicit", wback, dw, nw);
  check_split_backward("implicit", implicit_backward, &p, batch, xr, wr, dyr, dxr, dwr, dbr, NULL);
  if (p.bias) check_close("implicit db vs explicit", dbr, db, p.co);
  /* finite differences on the implicit plan itself, and accumulation */
  Case c = {.forward = implicit_fwd, .p = &p, .batch = batch, .ny = ny, .y = yr, .r = dyr};
  c.in[0] = xr, c.in[1] = wr, c.in[2] = b;
  check_gradient("implicit dx", &c, xr, nx, dxr);
  check_gradient("implicit dw", &c, wr, nw, dwr);
  if (p.bias) check_gradient("implicit db", &c, b, p.co, dbr);
  float *acc = random_array(nx), *keep = malloc(sizeof(float) * (size_t)nx);
  memcpy(keep, acc, sizeof(float) * (size_t)nx);
  implicit_backward(&p, batch, xr, wr, dyr, acc, true, dwr, dbr, 1, 1, 0, NULL);
  check_adds("implicit dx_add", dxr, acc, keep, nx);
  /* the transforms are each other's inverse, and add when asked */
  swk_to_bnrc(p.ci, p.h, p.w, batch, xr, back, false);
  CHECK(memcmp(back, x, sizeof(float) * (size_t)nx) == 0);
  swk_to_bnrc(p.ci, p.h, p.w, batch, xr, back, true); /* back held x: now 2x */
  for (int64_t i = 0; i < nx; i++) keep[i] = 2 * x[i];
  check_close("transform add", back, keep, nx);
  float *all[] = {x,  w,  b,   dy,  ws,  y,   dx,   dw,    db,  xr,
                  wr, yr, dyr, dxr, dwr, dbr, back, wback, acc, keep};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

int main(void) {
  for (int threads = 1; threads <= 2; threads++) {
    swk_set_threads(threads);
    if (swk_threads() != threads)
      break; /* a kernel set without threads (sw26010): once is enough */
    /* the blocked layout: 18 channels fill one block and 2 lanes of the next */
    test_batchnorm_bnrc16(false);
    test_batchnorm_bnrc16(true);
    test_batchnorm_bnrc16_streamed();
    /* overlapping windows over the padding, both modes; ceil mode (the last windows
     * clipped, as cifar10_quick's); windows with gaps between them; windows that tile the
     * input (LeNet's 2 x 2), whole, and clipped below with a column outside every window */
    SwkPool pools[] = {
        pool_row(18, 7, 7, 3, 3, 2, 2, 1, 1, true), pool_row(18, 7, 7, 3, 3, 2, 2, 1, 1, false),
        pool_row(5, 8, 9, 3, 3, 2, 2, 0, 0, true),  pool_row(17, 7, 8, 2, 2, 3, 3, 0, 0, true),
        pool_row(18, 8, 8, 2, 2, 2, 2, 0, 0, true), pool_row(17, 7, 7, 2, 2, 2, 2, 0, 0, true)};
    pools[5].wo = 3; /* a column outside every window */
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
      test_pool_bnrc16(pools[i], i == 2 ? 3 : 2);
    test_conv_direct(conv_row(18, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, true), 2);
    test_conv_direct(conv_row(5, 9, 9, 33, 3, 3, 2, 2, 1, 1, 1, false), 3);
    test_conv(conv_row(4, 7, 6, 6, 3, 2, 2, 1, 1, 0, 2, true), 3);
    test_conv(conv_row(3, 5, 5, 4, 1, 1, 1, 1, 0, 0, 1, true), 2);  /* 1x1: no im2col */
    test_conv(conv_row(2, 6, 7, 3, 3, 3, 2, 3, 1, 2, 1, false), 3); /* wide stride and pad */
    test_conv(conv_row(4, 6, 5, 6, 3, 2, 1, 1, 1, 1, 2, true),
              3); /* stride 1: dX by flipped filters */
    test_conv(conv_row(2, 7, 6, 3, 3, 3, 1, 1, 0, 0, 1, true),
              3); /* stride 1, "valid": dX by col2im */
    test_conv_large(conv_row(24, 16, 16, 20, 3, 3, 1, 1, 1, 1, 1, true),
                    3); /* K = 216: crosses a cache block inside a channel; dX flipped */
    test_conv_large(conv_row(200, 16, 17, 8, 1, 1, 1, 1, 0, 0, 1, false),
                    2); /* 1x1 read in place */
    test_conv_large(conv_row(6, 33, 31, 100, 5, 5, 2, 2, 2, 2, 2, true),
                    2); /* 50 rows per group; dX by col2im */
    test_conv_large(conv_row(8, 7, 7, 100, 3, 3, 1, 1, 1, 1, 1, true),
                    7); /* images side by side; more than one block of rows; dW^T split by
                           columns (co 100 > K 72) */
    test_conv_large(conv_row(20, 16, 17, 72, 1, 1, 1, 1, 0, 0, 1, true),
                    3); /* 1x1 expanding (ResNet's): dW^T split by columns, dY's transposed
                           eight by eight as the GEMM packs it, with edges */
    /* dilated (DeepLab's atrous 3x3): "same" padding (dX by flipped filters with the same
     * dilation), unequal dilations with stride 2 and groups (dX by col2im), no padding */
    test_conv(dilated(conv_row(4, 9, 8, 6, 3, 3, 1, 1, 2, 2, 1, true), 2, 2), 2);
    test_conv(dilated(conv_row(4, 11, 9, 6, 3, 2, 2, 1, 2, 1, 2, false), 3, 2), 2);
    test_conv(dilated(conv_row(3, 8, 8, 4, 2, 2, 1, 1, 0, 0, 1, true), 3, 3), 2);
    test_conv_large(dilated(conv_row(24, 17, 16, 20, 3, 3, 1, 1, 4, 4, 1, true), 4, 4), 3);
    test_conv_large(dilated(conv_row(6, 19, 21, 10, 3, 5, 2, 1, 2, 3, 2, true), 2, 3), 2);
    test_pool(pool_row(2, 7, 7, 3, 3, 2, 2, 1, 1, true), 2);
    /* rows wide enough for eight outputs at a time, the last eight overlapping: stride 1, 2
     * (two vectors' even elements) and 3 (gathered), with padding */
    test_pool(pool_row(2, 5, 20, 3, 3, 1, 1, 1, 1, true), 2);
    test_pool(pool_row(2, 9, 33, 3, 3, 2, 2, 1, 1, true), 2);
    test_pool(pool_row(1, 6, 39, 3, 3, 3, 3, 0, 0, true), 3);
    test_pool_rcnb(pool_row(2, 7, 7, 3, 3, 2, 2, 1, 1, true), 3);
    test_pool(pool_row(2, 7, 7, 3, 3, 2, 2, 1, 1, false), 2);
    test_pool_rcnb(pool_row(2, 7, 7, 3, 3, 2, 2, 1, 1, false), 3);
    /* stride 1 (GoogLeNet's 3x3 max pools) and 3: interior columns vectorised by stride */
    for (int stride = 1; stride <= 3; stride += 2)
      test_pool(pool_row(2, 9, 9, 3, 3, stride, stride, 1, 1, true), 2);
    test_pool(pool_row(3, 6, 5, 3, 3, 2, 2, 0, 0, false), 2);
    test_pool_rcnb(pool_row(3, 6, 5, 3, 3, 2, 2, 0, 0, false), 3);
    test_fc((SwkFc){.in = 12, .out = 5, .bias = true}, 4);
    test_fc((SwkFc){.in = 600, .out = 150, .bias = true},
            70); /* sw26010: several GEMM tiles and slices */
    test_activations();
    for (int bilinear = 0; bilinear <= 1; bilinear++)
      test_upsample(bilinear, 3, 2), test_upsample(bilinear, 1, 4);
    test_softmax(1), test_softmax(6);
    test_batchnorm(false);
    test_batchnorm(true);
    test_lrn(0.75f, 4);
    test_lrn(0.75f, 70);
    test_lrn(0.5f, 70);
    test_lrn(0.6f, 5);
    test_dropout();
    test_concat_and_add();
    test_mul(1);
    test_mul(6);
    test_channel_bias();
    test_mul_bnrc16(1);
    test_mul_bnrc16(6);
    test_relu_epilogues(0, 0);
    test_relu_epilogues(0.1f, 0);
    test_relu_epilogues(0, 6); /* ReLU6, batch norm only */
    test_softmax_loss(0);
    test_softmax_loss(0.2f);
    test_conv_implicit(conv_row(5, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, true), 19, true); /* tails */
    test_conv_implicit(conv_row(5, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, true), 17, false);
    test_conv_implicit(conv_row(4, 7, 6, 8, 3, 2, 2, 1, 1, 0, 1, false), 16, true);
    test_conv_implicit(conv_row(4, 7, 6, 8, 3, 2, 2, 1, 1, 0, 1, true), 16, false);
    test_conv_implicit(conv_row(3, 4, 4, 4, 1, 1, 1, 1, 0, 0, 1, true), 3,
                       false); /* 1x1, all scalar */
  }
  test_accuracy_and_sgd();
  test_adam(false);
  test_adam(true);
  return check_report();
}
