/* The host's depthwise convolution on the channel-blocked layout (targets/host/conv_depthwise.c):
 * forward (bias, ReLU epilogue), weight gradient (written and folded: keep and scale) and input
 * gradient (written, added, masked by a carried ReLU) against the definition in double
 * precision, on shapes with channels that fill their last block partly, strides 1 to 3,
 * 3x3 and 5x5 windows, padding wider than the window (a negative padding in the stride-1 input
 * gradient's sweep), rows long enough for strips and too short for any; the same bits on 1, 2
 * and 3 threads; and the gradients against central finite differences of the forward. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "conv_depthwise.h"
#include "conv_direct.h"
#include "rng.h"
#include "shapes.h"

static uint64_t rng_state = 4242;
static float *random_array(size_t n) {
  float *a = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) a[i] = swn_uniform(swn_mix64(rng_state++)) * 2.0f - 1.0f;
  return a;
}

/* c channels of h x w, a k x k filter per channel at stride s and padding pad, with a bias. */
static SwkConv shape(int c, int h, int w, int k, int s, int pad) {
  return conv_row(c, h, w, c, k, k, s, s, pad, pad, c, true);
}

static size_t at(const SwkConv *p, int b, int c, int r, int rows, int q, int cols) {
  return (((size_t)b * (size_t)p->ci + (size_t)c) * (size_t)rows + (size_t)r) * (size_t)cols +
         (size_t)q;
}

/* y = conv(x) + b, and for dy: dx, dw, db, all (B,N,R,C), by the definition in double. */
static void reference(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                      const float *dy, double *y, double *dx, double *dw, double *db) {
  size_t nx = (size_t)batch * p->ci * p->h * p->w, taps = (size_t)p->kh * p->kw;
  memset(dx, 0, sizeof(double) * nx);
  memset(dw, 0, sizeof(double) * (size_t)p->co * taps);
  memset(db, 0, sizeof(double) * (size_t)p->co);
  for (int n = 0; n < batch; n++)
    for (int c = 0; c < p->co; c++)
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow = 0; ow < p->wo; ow++) {
          size_t o = at(p, n, c, oh, p->ho, ow, p->wo);
          double sum = b[c];
          for (int i = 0; i < p->kh; i++)
            for (int j = 0; j < p->kw; j++) {
              int ih = oh * p->sh - p->ph + i, iw = ow * p->sw - p->pw + j;
              if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
              size_t xi = at(p, n, c, ih, p->h, iw, p->w), wi = (size_t)c * taps + i * p->kw + j;
              sum += (double)x[xi] * w[wi];
              dx[xi] += (double)dy[o] * w[wi];
              dw[wi] += (double)dy[o] * x[xi];
            }
          y[o] = sum;
          db[c] += dy[o];
        }
}

/* A problem: planar arrays, their blocked copies, a workspace. */
typedef struct Run {
  SwkConv p;
  int batch;
  size_t nx, ny, nw, nxb, nyb;
  float *x, *w, *b, *dy, *xb, *dyb, *ws;
} Run;

static float *blocked(const float *planar, int batch, int c, int hw) {
  float *out = malloc(sizeof(float) * host_blocked_floats(batch, c, hw, 1));
  host_to_blocked(planar, batch, c, hw, out, false);
  return out;
}

static Run run_new(SwkConv p, int batch) {
  Run r = {.p = p, .batch = batch};
  r.nx = (size_t)batch * p.ci * p.h * p.w, r.ny = (size_t)batch * p.co * p.ho * p.wo;
  r.nw = (size_t)p.co * p.kh * p.kw;
  r.nxb = host_blocked_floats(batch, p.ci, p.h, p.w);
  r.nyb = host_blocked_floats(batch, p.co, p.ho, p.wo);
  r.x = random_array(r.nx), r.w = random_array(r.nw), r.b = random_array((size_t)p.co);
  r.dy = random_array(r.ny);
  r.xb = blocked(r.x, batch, p.ci, p.h * p.w), r.dyb = blocked(r.dy, batch, p.co, p.ho * p.wo);
  r.ws = malloc(sizeof(float) * host_conv_depthwise_workspace_for(&p, 3));
  return r;
}

static void run_free(Run *r) {
  free(r->x), free(r->w), free(r->b), free(r->dy), free(r->xb), free(r->dyb), free(r->ws);
}

static void forward(Run *r, float *yb) {
  swk_conv_depthwise_forward(&r->p, r->batch, r->xb, r->w, r->b, yb, r->ws);
}

/* The largest error relative to the reference's largest magnitude. */
static double error(const float *got, const double *want, size_t n) {
  double worst = 0, scale = 1e-30;
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
  for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - want[i]));
  return worst / scale;
}

static void check_close(const SwkConv *p, const char *what, double err) {
  if (err > 2e-6)
    fprintf(stderr, "depthwise c%d %dx%d k%d s%d p%d: %s off by %.3g\n", p->ci, p->h, p->w, p->kh,
            p->sh, p->ph, what, err);
  CHECK(err <= 2e-6);
}

static float *unblocked(const float *b, int batch, int c, int hw) {
  float *out = malloc(sizeof(float) * (size_t)batch * c * hw);
  host_from_blocked(b, batch, c, hw, out, false);
  return out;
}

/* Every lane past the channels of the last block is 0. */
static bool unused_lanes_zero(const float *b, int batch, int c, int hw) {
  int blocks = host_blocks(c);
  for (int n = 0; n < batch; n++)
    for (size_t q = 0; q < (size_t)hw; q++)
      for (int l = c - (blocks - 1) * 16; l < 16; l++)
        if (b[(((size_t)n * blocks + blocks - 1) * hw + q) * 16 + (size_t)l] != 0) return false;
  return true;
}

static void test_shape(SwkConv p, int batch) {
  Run r = run_new(p, batch);
  double *y = malloc(sizeof(double) * r.ny), *dx = malloc(sizeof(double) * r.nx);
  double *dw = malloc(sizeof(double) * r.nw), *db = malloc(sizeof(double) * (size_t)p.co);
  reference(&p, batch, r.x, r.w, r.b, r.dy, y, dx, dw, db);
  int hw = p.h * p.w, ohw = p.ho * p.wo;

  /* forward, and with the ReLU epilogue (slope 0.1) */
  float *yb = malloc(sizeof(float) * r.nyb);
  forward(&r, yb);
  float *got = unblocked(yb, batch, p.co, ohw);
  check_close(&p, "forward", error(got, y, r.ny));
  CHECK(unused_lanes_zero(yb, batch, p.co, ohw));
  r.p.relu = true, r.p.relu_slope = 0.1f;
  forward(&r, yb);
  free(got), got = unblocked(yb, batch, p.co, ohw);
  double *relu = malloc(sizeof(double) * r.ny);
  for (size_t i = 0; i < r.ny; i++) relu[i] = y[i] > 0 ? y[i] : 0.1 * y[i];
  check_close(&p, "forward with ReLU", error(got, relu, r.ny));
  r.p.relu = false;

  /* weight gradient, written, then folded: dw = 0.5 dw + 2 grad */
  float *gw = random_array(r.nw), *gb = random_array((size_t)p.co);
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, NULL, false, gw, gb, 1, 1, 0, r.ws);
  check_close(&p, "dW", error(gw, dw, r.nw));
  check_close(&p, "db", error(gb, db, (size_t)p.co));
  double *folded = malloc(sizeof(double) * r.nw), *folded_b = malloc(sizeof(double) * p.co);
  for (size_t i = 0; i < r.nw; i++) folded[i] = 0.5 * gw[i] + 2 * dw[i];
  for (int c = 0; c < p.co; c++) folded_b[c] = 0.5 * gb[c] + 3 * db[c];
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, NULL, false, gw, gb, 2, 3, 0.5f, r.ws);
  check_close(&p, "dW folded", error(gw, folded, r.nw));
  check_close(&p, "db folded", error(gb, folded_b, (size_t)p.co));

  /* input gradient: written, added to what is there, masked by x (slope 0.25) */
  float *dxb = malloc(sizeof(float) * r.nxb);
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, dxb, false, NULL, NULL, 1, 1, 0, r.ws);
  free(got), got = unblocked(dxb, batch, p.ci, hw);
  check_close(&p, "dX", error(got, dx, r.nx));
  CHECK(unused_lanes_zero(dxb, batch, p.ci, hw));
  double *twice = malloc(sizeof(double) * r.nx);
  for (size_t i = 0; i < r.nx; i++) twice[i] = 2 * dx[i];
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, dxb, true, NULL, NULL, 1, 1, 0, r.ws);
  free(got), got = unblocked(dxb, batch, p.ci, hw);
  check_close(&p, "dX added", error(got, twice, r.nx));
  r.p.dx_relu = true, r.p.dx_relu_slope = 0.25f;
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, dxb, false, NULL, NULL, 1, 1, 0, r.ws);
  free(got), got = unblocked(dxb, batch, p.ci, hw);
  for (size_t i = 0; i < r.nx; i++) twice[i] = r.x[i] > 0 ? dx[i] : 0.25 * dx[i];
  check_close(&p, "dX masked", error(got, twice, r.nx));
  r.p.dx_relu_slope = 0, r.p.dx_relu_ceiling = 0.5f; /* a ReLU6's mask, its ceiling 0.5 here */
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, dxb, false, NULL, NULL, 1, 1, 0, r.ws);
  free(got), got = unblocked(dxb, batch, p.ci, hw);
  for (size_t i = 0; i < r.nx; i++) twice[i] = r.x[i] > 0 && r.x[i] < 0.5f ? dx[i] : 0;
  check_close(&p, "dX masked below a ceiling", error(got, twice, r.nx));

  free(y), free(dx), free(dw), free(db), free(yb), free(got), free(relu), free(gw), free(gb);
  free(folded), free(folded_b), free(dxb), free(twice);
  run_free(&r);
}

/* The same bits on 1, 2 and 3 threads, forward and both gradients. */
static void test_threads(SwkConv p, int batch) {
  Run r = run_new(p, batch);
  size_t sizes[3] = {r.nyb, r.nw, r.nxb};
  float *outs[3][3];
  for (int t = 0; t < 3; t++) {
    swk_set_threads(t + 1);
    for (int c = 0; c < 3; c++) outs[t][c] = calloc(sizes[c], sizeof(float));
    forward(&r, outs[t][0]);
    swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, outs[t][2], false, outs[t][1], NULL,
                                1, 1, 0, r.ws);
  }
  for (int t = 0; t < 3; t += 2)
    for (int c = 0; c < 3; c++) {
      bool same = !memcmp(outs[t][c], outs[1][c], sizeof(float) * sizes[c]);
      if (!same) fprintf(stderr, "depthwise: computation %d on %d threads differs\n", c, t + 1);
      CHECK(same);
    }
  for (int t = 0; t < 3; t++)
    for (int c = 0; c < 3; c++) free(outs[t][c]);
  run_free(&r);
  swk_set_threads(2);
}

/* L = sum(y * dy); its derivatives by central differences against the kernels' gradients. */
static double objective(Run *r, float *yb) {
  free(r->xb), r->xb = blocked(r->x, r->batch, r->p.ci, r->p.h * r->p.w);
  forward(r, yb);
  double sum = 0;
  for (size_t i = 0; i < r->nyb; i++) sum += (double)yb[i] * r->dyb[i];
  return sum;
}

static double numeric(Run *r, float *v, size_t i, float *yb) {
  const float h = 1e-2f;
  float keep = v[i];
  v[i] = keep + h;
  double up = objective(r, yb);
  v[i] = keep - h;
  double down = objective(r, yb);
  v[i] = keep;
  objective(r, yb);
  return (up - down) / (2.0 * h);
}

static void check_numeric(const char *what, double analytic, double numeric_value) {
  double err = fabs(analytic - numeric_value), tolerance = 2e-3 * (1 + fabs(numeric_value));
  if (err > tolerance)
    fprintf(stderr, "depthwise %s: analytic %.6g, finite differences %.6g\n", what, analytic,
            numeric_value);
  CHECK(err <= tolerance);
}

static void test_finite_differences(SwkConv p, int batch) {
  Run r = run_new(p, batch);
  float *yb = malloc(sizeof(float) * r.nyb), *dxb = malloc(sizeof(float) * r.nxb);
  float *dw = malloc(sizeof(float) * r.nw), *db = malloc(sizeof(float) * (size_t)p.co);
  swk_conv_depthwise_backward(&r.p, batch, r.xb, r.w, r.dyb, dxb, false, dw, db, 1, 1, 0, r.ws);
  float *dx = unblocked(dxb, batch, p.ci, p.h * p.w);
  for (size_t i = 0; i < r.nw; i += 5) check_numeric("dw", dw[i], numeric(&r, r.w, i, yb));
  for (size_t i = 0; i < r.nx; i += 7) check_numeric("dx", dx[i], numeric(&r, r.x, i, yb));
  for (int c = 0; c < p.co; c++) check_numeric("db", db[c], numeric(&r, r.b, (size_t)c, yb));
  free(yb), free(dxb), free(dw), free(db), free(dx);
  run_free(&r);
}

int main(void) {
  swk_set_threads(2);
  /* channels, height, width, window, stride, padding */
  const int shapes[][6] = {
      {16, 8, 8, 3, 1, 1},   {20, 9, 7, 3, 2, 1},   {35, 12, 10, 5, 1, 2}, {32, 7, 7, 3, 1, 1},
      {16, 13, 29, 3, 2, 1}, {5, 6, 6, 3, 3, 0},    {16, 5, 5, 3, 1, 3},   {24, 20, 30, 5, 2, 2},
      {3, 4, 40, 3, 1, 0},   {48, 14, 14, 3, 1, 1}, {1, 5, 5, 3, 1, 1},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const int *s = shapes[i];
    SwkConv p = shape(s[0], s[1], s[2], s[3], s[4], s[5]);
    CHECK(host_depthwise_legal(&p));
    test_shape(p, 3);
    test_shape(p, 11); /* more images than the weight gradient's parts, unevenly */
  }
  SwkConv dense = shape(16, 8, 8, 3, 1, 1);
  dense.groups = 1;
  CHECK(!host_depthwise_legal(&dense));
  test_threads(shape(40, 15, 19, 3, 1, 1), 5);
  test_threads(shape(24, 16, 21, 5, 2, 2), 9);
  test_finite_differences(shape(18, 6, 7, 3, 1, 1), 2);
  test_finite_differences(shape(7, 7, 9, 3, 2, 1), 2);
  return check_report();
}
