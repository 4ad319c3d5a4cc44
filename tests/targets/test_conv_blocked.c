/* The host's convolutions on the channel-blocked layout: direct (targets/host/conv_direct.h)
 * and Winograd F(2x2, 3x3), F(4x4, 3x3) and F(2x2, 5x5) (conv_winograd.h). Forward and both gradients
 * against the definition in double precision, on every instruction set this CPU runs (strips
 * and tiles with and without padding, strides 2 to 4, channels that fill their last block partly
 * (a first layer's few: taps in the tiles' lanes),
 * input in (B,N,R,C) (a first layer) or blocked, one output block or an odd number, gradients
 * added to and folded; Winograd: tiles cut by the image's edge, passes of several chunks, the
 * same bits on 1, 2 and 3 threads); and the gradients against central finite differences of
 * the forward. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "conv_direct.h"
#include "conv_winograd.h"
#include "direct_tiling.h"
#include "isa.h"
#include "rng.h"
#include "stream.h"
#include "workspace.h"

static uint64_t rng_state = 777;
static float *random_array(size_t n) {
  float *a = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) a[i] = swn_uniform(swn_mix64(rng_state++)) * 2.0f - 1.0f;
  return a;
}

static size_t conv_index(int n, int c, int channels, int r, int rows, int q, int cols) {
  return (((size_t)n * (size_t)channels + (size_t)c) * (size_t)rows + (size_t)r) * (size_t)cols +
         (size_t)q;
}

/* Forward (y, (B,N,R,C)) and, for dy, both gradients by the definition in double precision. */
static void reference(const SwkConv *p, int batch, const float *x, const float *w, const float *b,
                      const float *dy, float *y, float *dx, float *dw, float *db) {
  size_t nx = (size_t)batch * p->ci * p->h * p->w, nw = (size_t)p->co * p->ci * p->kh * p->kw;
  double *gx = calloc(nx, sizeof(double)), *gw = calloc(nw, sizeof(double));
  for (int o = 0; o < p->co; o++) db[o] = 0;
  for (int n = 0; n < batch; n++)
    for (int o = 0; o < p->co; o++)
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow = 0; ow < p->wo; ow++) {
          size_t at = conv_index(n, o, p->co, oh, p->ho, ow, p->wo);
          double sum = p->bias ? b[o] : 0;
          for (int c = 0; c < p->ci; c++)
            for (int i = 0; i < p->kh; i++)
              for (int j = 0; j < p->kw; j++) {
                int ih = oh * p->sh - p->ph + i, iw = ow * p->sw - p->pw + j;
                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                size_t xi = conv_index(n, c, p->ci, ih, p->h, iw, p->w);
                size_t wi = conv_index(o, c, p->ci, i, p->kh, j, p->kw);
                sum += (double)x[xi] * w[wi];
                gx[xi] += (double)dy[at] * w[wi];
                gw[wi] += (double)dy[at] * x[xi];
              }
          y[at] = (float)sum;
          db[o] += dy[at];
        }
  for (size_t i = 0; i < nx; i++) dx[i] = (float)gx[i];
  for (size_t i = 0; i < nw; i++) dw[i] = (float)gw[i];
  free(gx), free(gw);
}

/* A plan on the blocked layout: direct (m 0) or Winograd F(m x m, r x r). */
typedef struct Plan {
  const char *name;
  int m;
} Plan;

static const Plan plans[] = {{"direct", 0}, {"winograd2", 2}, {"winograd4", 4}};
enum { PLANS = sizeof plans / sizeof plans[0] };

static bool plan_runs(const Plan *k, const SwkConv *p, bool planar) {
  return !k->m || (!planar && host_winograd_legal(p, k->m));
}

/* The largest error against the definition, relative to the result's largest magnitude: the
 * direct plan sums as the definition does; Winograd's transforms add rounding, most with the
 * six points of F(4x4, 3x3) and F(2x2, 5x5) (conv_winograd_transforms.h).
 * Measured here on every instruction set: F(2x2, 3x3) up to 1.0e-6, F(4x4, 3x3) up to 1.7e-5
 * (the input gradient summing 512 channels), F(2x2, 5x5) up to 8.2e-6 (weight gradients over
 * 32 x 32 images); the tolerances leave 6-12x. */
static double tolerance(const Plan *k, const SwkConv *p) {
  return k->m && k->m + p->kh - 1 == 6 ? 1e-4 : 1e-5;
}

static void plan_forward(const Plan *k, const SwkConv *p, int batch, const float *x, bool planar,
                         const float *w, const float *b, float *y, float *ws) {
  SwkConv q = *p;
  q.x_planar = planar;
  if (k->m)
    host_conv_winograd_forward(p, k->m, batch, x, w, b, y, ws);
  else
    host_conv_direct_forward(&q, batch, x, w, b, y, ws);
}

static void plan_weight_gradient(const Plan *k, const SwkConv *p, int batch, const float *x,
                                 bool planar, const float *dy, float *dw, float *db, float scale,
                                 float bias_scale, float keep, float *ws) {
  SwkConv q = *p;
  q.x_planar = planar;
  if (k->m)
    host_conv_winograd_weight_gradient(p, k->m, batch, x, dy, dw, db, scale, bias_scale, keep, ws);
  else
    host_conv_direct_weight_gradient(&q, batch, x, dy, dw, db, scale, bias_scale, keep, ws);
}

static void plan_masked_input_gradient(const Plan *k, const SwkConv *p, int batch, const float *w,
                                       const float *dy, float *dx, bool dx_add, const float *mask,
                                       float *ws) {
  if (k->m)
    host_conv_winograd_input_gradient(p, k->m, batch, w, dy, dx, dx_add, mask, ws);
  else
    host_conv_direct_input_gradient(p, batch, w, dy, dx, dx_add, mask, ws);
}

static void plan_input_gradient(const Plan *k, const SwkConv *p, int batch, const float *w,
                                const float *dy, float *dx, bool dx_add, float *ws) {
  plan_masked_input_gradient(k, p, batch, w, dy, dx, dx_add, NULL, ws);
}

static size_t workspace_floats(const SwkConv *p) {
  size_t most = host_conv_direct_workspace(p);
  for (int m = 2; m <= 4; m += 2)
    if (host_winograd_legal(p, m) && host_conv_winograd_workspace(p, m) > most)
      most = host_conv_winograd_workspace(p, m);
  return most;
}

static void check_close(const Plan *k, const char *what, const char *isa, const SwkConv *p,
                        const float *got, const float *want, size_t n) {
  double err = 0, scale = 1e-6, most = tolerance(k, p);
  for (size_t i = 0; i < n; i++) err = fmax(err, fabs(got[i] - want[i]));
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
  if (err > most * scale)
    fprintf(stderr, "%s %s %s ci %d %dx%d co %d k %d s %d p %d: error %.3g of %.3g\n", isa, k->name,
            what, p->ci, p->h, p->w, p->co, p->kh, p->sh, p->ph, err, scale);
  CHECK(err <= most * scale);
}

static SwkConv shape(int ci, int h, int w, int co, int k, int s, int pad) {
  SwkConv p = {.ci = ci,
               .h = h,
               .w = w,
               .co = co,
               .kh = k,
               .kw = k,
               .sh = s,
               .sw = s,
               .ph = pad,
               .pw = pad,
               .dh = 1,
               .dw = 1,
               .groups = 1,
               .bias = true};
  p.ho = (h + 2 * pad - k) / s + 1, p.wo = (w + 2 * pad - k) / s + 1;
  return p;
}

typedef struct Run {
  const Plan *k;
  SwkConv p;
  int batch;
  bool planar;
  size_t nx, ny, nw, nxb, nyb;
  float *x, *w, *b, *dy, *xb, *dyb, *ws;
} Run;

static Run run_new(const Plan *k, SwkConv p, int batch, bool planar) {
  Run r = {.k = k, .p = p, .batch = batch, .planar = planar};
  r.nx = (size_t)batch * p.ci * p.h * p.w, r.ny = (size_t)batch * p.co * p.ho * p.wo;
  r.nw = (size_t)p.co * p.ci * p.kh * p.kw;
  r.nxb = host_blocked_floats(batch, p.ci, p.h, p.w);
  r.nyb = host_blocked_floats(batch, p.co, p.ho, p.wo);
  r.x = random_array(r.nx), r.w = random_array(r.nw), r.b = random_array((size_t)p.co);
  r.dy = random_array(r.ny), r.xb = malloc(sizeof(float) * r.nxb);
  r.dyb = malloc(sizeof(float) * r.nyb);
  r.ws = malloc(sizeof(float) * workspace_floats(&p));
  host_to_blocked(r.x, batch, p.ci, p.h * p.w, r.xb, false);
  host_to_blocked(r.dy, batch, p.co, p.ho * p.wo, r.dyb, false);
  return r;
}

/* The workspace, filled with NaN: a kernel must not depend on what an earlier call left there
 * (filters it skipped packing, sums it did not set). */
static float *fresh_ws(const Run *r) {
  memset(r->ws, 0xff, sizeof(float) * workspace_floats(&r->p));
  return r->ws;
}

static void run_free(Run *r) {
  free(r->x), free(r->w), free(r->b), free(r->dy), free(r->xb), free(r->dyb), free(r->ws);
}

/* Elements of `got` that are not t > 0 ? v : slope * v (a ReLU of v where t is v, its backward
 * on gradient v where t is the ReLU's output), bit for bit. */
static int unlike_relu(const float *got, const float *t, const float *v, float slope, size_t n) {
  int differ = 0;
  for (size_t i = 0; i < n; i++) {
    float want = t[i] > 0 ? v[i] : slope * v[i];
    differ += memcmp(&got[i], &want, sizeof want) != 0;
  }
  return differ;
}

static void check_unlike(int differ, const Plan *k, const char *isa, const SwkConv *p,
                         const char *what) {
  if (differ)
    fprintf(stderr, "FAIL: %s %s %s differs %d times, %dx%dx%d -> %d k%d s%d\n", k->name, isa, what,
            differ, p->ci, p->h, p->w, p->co, p->kh, p->sh);
  CHECK_EQ_INT(differ, 0);
}

/* The forward with its ReLU epilogue applied as y is stored (SwkConv.relu, slopes 0 and 0.25):
 * bit for bit the ReLU kernel's output from the plain forward's y (yb). */
static void check_relu_forward(const Plan *k, const char *isa, const SwkConv *p, const Run *r,
                               const float *yb) {
  float *y = malloc(sizeof(float) * r->nyb);
  int differ = 0;
  for (int leaky = 0; leaky < 2; leaky++) {
    SwkConv q = *p;
    q.relu = true, q.relu_slope = leaky ? 0.25f : 0;
    plan_forward(k, &q, r->batch, r->planar ? r->x : r->xb, r->planar, r->w, r->b, y, r->ws);
    differ += unlike_relu(y, yb, yb, q.relu_slope, r->nyb);
  }
  check_unlike(differ, k, isa, p, "forward with its ReLU");
  free(y);
}

/* The input gradient masked by a ReLU's output as it is stored (SwkConv.dx_relu), written and
 * added to: bit for bit what that ReLU's backward makes of the unmasked one, pixels no tap
 * reaches included; mask values of 0 and NaN are not above 0, and the slope is 0 or not; and
 * with a ceiling (SwkConv.dx_relu_ceiling, a ReLU6's), 0 < mask < ceiling. */
static void check_masked_input_gradient(const Plan *k, const char *isa, const SwkConv *p,
                                        const Run *r) {
  float *mask = random_array(r->nxb), *base = random_array(r->nxb);
  float *want = malloc(sizeof(float) * r->nxb), *dx = malloc(sizeof(float) * r->nxb);
  for (size_t i = 0; i < r->nxb; i += 5) mask[i] = i % 2 ? 0 : NAN;
  int differ = 0, clipped = 0;
  for (int add = 0; add < 2; add++) {
    SwkConv q = *p;
    q.dx_relu = true, q.dx_relu_slope = add ? 0.1f : 0;
    memcpy(want, base, sizeof(float) * r->nxb);
    plan_input_gradient(k, p, r->batch, r->w, r->dyb, want, add, r->ws);
    memcpy(dx, base, sizeof(float) * r->nxb);
    plan_masked_input_gradient(k, &q, r->batch, r->w, r->dyb, dx, add, mask, r->ws);
    differ += unlike_relu(dx, mask, want, q.dx_relu_slope, r->nxb);
    /* a ReLU6's mask, 0 < x < ceiling (0.5 here: random values on both sides) */
    q.dx_relu_ceiling = 0.5f, q.dx_relu_slope = 0;
    memcpy(dx, base, sizeof(float) * r->nxb);
    plan_masked_input_gradient(k, &q, r->batch, r->w, r->dyb, dx, add, mask, r->ws);
    for (size_t i = 0; i < r->nxb; i++) {
      float expect = mask[i] > 0 && mask[i] < 0.5f ? want[i] : 0 * want[i];
      differ += memcmp(&dx[i], &expect, sizeof expect) != 0, clipped += mask[i] >= 0.5f;
    }
  }
  CHECK(clipped > 0);
  check_unlike(differ, k, isa, p, "masked input gradient");
  free(mask), free(base), free(want), free(dx);
}

/* Forward and both gradients (where legal) against the definition. */
static void test_conv(const Plan *k, const char *isa, SwkConv p, int batch, bool planar) {
  if (!plan_runs(k, &p, planar)) return;
  Run r = run_new(k, p, batch, planar);
  float *want_y = malloc(sizeof(float) * r.ny), *want_dx = malloc(sizeof(float) * r.nx),
        *want_dw = malloc(sizeof(float) * r.nw), *want_db = malloc(sizeof(float) * (size_t)p.co);
  reference(&p, batch, r.x, r.w, r.b, r.dy, want_y, want_dx, want_dw, want_db);
  float *yb = random_array(r.nyb), *got = malloc(sizeof(float) * (r.nx > r.ny ? r.nx : r.ny));
  plan_forward(k, &p, batch, planar ? r.x : r.xb, planar, r.w, r.b, yb, r.ws);
  host_from_blocked(yb, batch, p.co, p.ho * p.wo, got, false);
  check_close(k, "forward", isa, &p, got, want_y, r.ny);
  int unused = 0, bo = host_blocks(p.co), used = p.co - 16 * (bo - 1), pixels = p.ho * p.wo;
  for (int n = 0; n < batch; n++) /* the last block's lanes past co */
    for (int q = 0; q < pixels; q++)
      for (int l = used; l < 16; l++)
        unused += yb[(((size_t)n * bo + bo - 1) * pixels + q) * 16 + l] != 0;
  CHECK_EQ_INT(unused, 0);
  check_relu_forward(k, isa, &p, &r, yb);

  /* weight gradient, written, then folded: keep 0.5 x old + 2 x gradient (bias: 3 x) */
  float *dw = random_array(r.nw), *db = random_array((size_t)p.co);
  plan_weight_gradient(k, &p, batch, planar ? r.x : r.xb, planar, r.dyb, dw, db, 1, 1, 0, r.ws);
  check_close(k, "weight gradient", isa, &p, dw, want_dw, r.nw);
  check_close(k, "bias gradient", isa, &p, db, want_db, (size_t)p.co);
  float *old = malloc(sizeof(float) * r.nw);
  for (size_t i = 0; i < r.nw; i++) old[i] = dw[i] = (float)i * 0.01f;
  plan_weight_gradient(k, &p, batch, planar ? r.x : r.xb, planar, r.dyb, dw, NULL, 2, 3, 0.5f,
                       r.ws);
  for (size_t i = 0; i < r.nw; i++) want_dw[i] = 0.5f * old[i] + 2 * want_dw[i];
  check_close(k, "folded weight gradient", isa, &p, dw, want_dw, r.nw);

  /* input gradient, written and added */
  if (!planar) {
    float *dxb = random_array(r.nxb), *base = random_array(r.nx);
    plan_input_gradient(k, &p, batch, r.w, r.dyb, dxb, false, r.ws);
    host_from_blocked(dxb, batch, p.ci, p.h * p.w, got, false);
    check_close(k, "input gradient", isa, &p, got, want_dx, r.nx);
    host_to_blocked(base, batch, p.ci, p.h * p.w, dxb, false);
    plan_input_gradient(k, &p, batch, r.w, r.dyb, dxb, true, r.ws);
    host_from_blocked(dxb, batch, p.ci, p.h * p.w, got, false);
    for (size_t i = 0; i < r.nx; i++) want_dx[i] += base[i];
    check_close(k, "added input gradient", isa, &p, got, want_dx, r.nx);
    check_masked_input_gradient(k, isa, &p, &r);
    free(dxb), free(base);
  }
  free(want_y), free(want_dx), free(want_dw), free(want_db), free(yb), free(got), free(dw),
      free(db), free(old);
  run_free(&r);
}

/* L = sum(y * dy) of the forward pass (blocked y; unused lanes are 0 and dyb's are too). */
static double objective(Run *r, float *yb) {
  plan_forward(r->k, &r->p, r->batch, r->planar ? r->x : r->xb, r->planar, r->w, r->b, yb, r->ws);
  double sum = 0;
  for (size_t i = 0; i < r->nyb; i++) sum += (double)yb[i] * r->dyb[i];
  return sum;
}

/* dL/dv at index i by central differences; v is x (then xb follows it), w or b. */
static double numeric(Run *r, float *v, size_t i, float *yb) {
  const float h = 1e-2f;
  float keep = v[i];
  double up, down;
  v[i] = keep + h;
  host_to_blocked(r->x, r->batch, r->p.ci, r->p.h * r->p.w, r->xb, false);
  up = objective(r, yb);
  v[i] = keep - h;
  host_to_blocked(r->x, r->batch, r->p.ci, r->p.h * r->p.w, r->xb, false);
  down = objective(r, yb);
  v[i] = keep;
  host_to_blocked(r->x, r->batch, r->p.ci, r->p.h * r->p.w, r->xb, false);
  return (up - down) / (2.0 * h);
}

static void check_numeric(const Plan *k, const char *what, double analytic, double numeric_value) {
  double err = fabs(analytic - numeric_value), tolerance = 2e-3 * (1 + fabs(numeric_value));
  if (err > tolerance)
    fprintf(stderr, "%s %s: analytic %.6g, finite differences %.6g\n", k->name, what, analytic,
            numeric_value);
  CHECK(err <= tolerance);
}

/* The gradients against central finite differences of the forward, at every 7th element. */
static void test_finite_differences(const Plan *k, SwkConv p, int batch) {
  if (!plan_runs(k, &p, false)) return;
  Run r = run_new(k, p, batch, false);
  float *yb = malloc(sizeof(float) * r.nyb), *dxb = malloc(sizeof(float) * r.nxb);
  float *dx = malloc(sizeof(float) * r.nx), *dw = malloc(sizeof(float) * r.nw),
        *db = malloc(sizeof(float) * (size_t)p.co);
  plan_weight_gradient(k, &p, batch, r.xb, false, r.dyb, dw, db, 1, 1, 0, r.ws);
  plan_input_gradient(k, &p, batch, r.w, r.dyb, dxb, false, r.ws);
  host_from_blocked(dxb, batch, p.ci, p.h * p.w, dx, false);
  for (size_t i = 0; i < r.nw; i += 7) check_numeric(k, "dw", dw[i], numeric(&r, r.w, i, yb));
  for (size_t i = 0; i < r.nx; i += 7) check_numeric(k, "dx", dx[i], numeric(&r, r.x, i, yb));
  for (int o = 0; o < p.co; o++) check_numeric(k, "db", db[o], numeric(&r, r.b, (size_t)o, yb));
  free(yb), free(dxb), free(dx), free(dw), free(db);
  run_free(&r);
}

/* ------------------------------------------------------------------ threads */

/* A plan's results bit for bit the same on 1, 2 and 3 threads. Winograd's forward and dX run
 * passes of their own per thread where the batch has tiles enough (chunks as many as a
 * multiple of the threads, so cut differently for each count) and passes shared by the team
 * otherwise, its dW sets of sums over runs of tiles cut by the batch alone
 * (host_winograd_wgrad_sets). The direct plan's forward and dX share strips by a queue, its
 * forward with filters outer packing each group in a buffer of each thread's that runs it (a
 * group shared at the end of the queue packed twice); its dW splits images by threads (not
 * compared). Each output is still one sum in one order. */
static void test_threads(const Plan *k, SwkConv p, int batch) {
  if (!plan_runs(k, &p, false)) return;
  swk_set_threads(3); /* the workspace for the most threads */
  Run r = run_new(k, p, batch, false);
  float *outs[3][3]; /* [threads - 1][forward, dW, dX] */
  size_t sizes[3] = {r.nyb, r.nw, r.nxb};
  for (int threads = 1; threads <= 3; threads++) {
    swk_set_threads(threads);
    float **o = outs[threads - 1];
    for (int c = 0; c < 3; c++) o[c] = malloc(sizeof(float) * sizes[c]);
    plan_forward(k, &p, batch, r.xb, false, r.w, r.b, o[0], fresh_ws(&r));
    plan_weight_gradient(k, &p, batch, r.xb, false, r.dyb, o[1], NULL, 1, 1, 0, fresh_ws(&r));
    plan_input_gradient(k, &p, batch, r.w, r.dyb, o[2], false, fresh_ws(&r));
  }
  for (int threads = 1; threads <= 3; threads += 2)
    for (int c = 0; c < 3; c++) {
      if (c == 1 && !k->m) continue;
      bool same = !memcmp(outs[threads - 1][c], outs[1][c], sizeof(float) * sizes[c]);
      if (!same)
        fprintf(stderr, "%s %dx%dx%d -> %d: %s on %d threads differs from 2's\n", k->name, p.ci,
                p.h, p.w, p.co, (const char *[]){"forward", "dW", "dX"}[c], threads);
      CHECK(same);
    }
  for (int t = 0; t < 3; t++)
    for (int c = 0; c < 3; c++) free(outs[t][c]);
  run_free(&r);
  swk_set_threads(2);
}

/* ------------------------------------------------------------------ streamed dW */

/* A direct weight gradient whose dW is too large for the caches (stream.h) is stored a unit of
 * tiles at a time with streaming stores (store_unit in conv_direct.c): against the definition,
 * and bit for bit alike, on 1, 2 and 3 threads (3 cut units between threads), written (dW on a
 * 64-byte boundary, as a program's pools are) and folded (kept: tile by tile). */
static void test_streamed_weight_gradient(const char *isa, SwkConv p, int batch) {
  swk_set_threads(3); /* the workspace for the most threads */
  Run r = run_new(&plans[0], p, batch, false);
  CHECK(sizeof(float) * r.nw >= HOST_STREAM_BYTES); /* the shape streams its dW */
  float *want_y = malloc(sizeof(float) * r.ny), *want_dx = malloc(sizeof(float) * r.nx),
        *want_dw = malloc(sizeof(float) * r.nw), *want_db = malloc(sizeof(float) * (size_t)p.co);
  reference(&p, batch, r.x, r.w, r.b, r.dy, want_y, want_dx, want_dw, want_db);
  size_t bytes = (sizeof(float) * r.nw + 63) / 64 * 64;
  float *dw[3], *db = malloc(sizeof(float) * (size_t)p.co);
  for (int threads = 1; threads <= 3; threads++) {
    swk_set_threads(threads);
    float *d = dw[threads - 1] = aligned_alloc(64, bytes);
    memset(d, 0xff, bytes);
    host_conv_direct_weight_gradient(&p, batch, r.xb, r.dyb, d, db, 1, 1, 0, fresh_ws(&r));
    check_close(&plans[0], "streamed weight gradient", isa, &p, d, want_dw, r.nw);
    check_close(&plans[0], "its bias gradient", isa, &p, db, want_db, (size_t)p.co);
  }
  CHECK(!memcmp(dw[0], dw[1], sizeof(float) * r.nw) && !memcmp(dw[2], dw[1], sizeof(float) * r.nw));
  for (size_t i = 0; i < r.nw; i++) dw[0][i] = (float)(i % 100) * 0.01f;
  host_conv_direct_weight_gradient(&p, batch, r.xb, r.dyb, dw[0], NULL, 2, 3, 0.5f, fresh_ws(&r));
  for (size_t i = 0; i < r.nw; i++) want_dw[i] = 0.5f * (float)(i % 100) * 0.01f + 2 * want_dw[i];
  check_close(&plans[0], "folded streamed weight gradient", isa, &p, dw[0], want_dw, r.nw);
  for (int t = 0; t < 3; t++) free(dw[t]);
  free(want_y), free(want_dx), free(want_dw), free(want_db), free(db);
  run_free(&r);
  swk_set_threads(2);
}

/* ------------------------------------------------------------------ tilings */

/* Every tiling of the direct plan's forward and input gradient (both orders, passes of 1 to 3
 * input blocks or all) gives the rule's results bit for bit (direct_tiling.h), written and
 * added, with a ReLU epilogue, and dX masked by a ReLU's output (as that ReLU's backward would
 * leave it); and swnc tune's candidates leave out the rule and passes
 * as large as the channels. */
static void test_tilings(const char *isa, SwkConv p, int batch, bool planar) {
  p.x_planar = planar;
  Run r = run_new(&plans[0], p, batch, planar);
  const float *x = planar ? r.x : r.xb;
  float *want_y = random_array(r.nyb), *y = malloc(sizeof(float) * r.nyb);
  float *base = random_array(r.nxb), *want_dx = malloc(sizeof(float) * r.nxb),
        *want_added = malloc(sizeof(float) * r.nxb), *dx = malloc(sizeof(float) * r.nxb),
        *mask = random_array(r.nxb);
  for (size_t i = 0; i < r.nxb; i += 7) mask[i] = i % 2 ? 0 : NAN; /* neither is above 0 */
  host_conv_direct_forward(&p, batch, x, r.w, r.b, want_y, r.ws);
  host_conv_direct_input_gradient(&p, batch, r.w, r.dyb, want_dx, false, NULL, r.ws);
  memcpy(want_added, base, sizeof(float) * r.nxb);
  host_conv_direct_input_gradient(&p, batch, r.w, r.dyb, want_added, true, NULL, r.ws);
  int differ = 0;
  for (int order = 0; order < 2; order++)
    for (int blocks = 0; blocks <= 3; blocks++) {
      SwkConv q = p;
      q.forward_tiling = q.dgrad_tiling =
          host_direct_tiling_word((HostDirectTiling){.filters_outer = order, .blocks = blocks});
      memset(y, 0xff, sizeof(float) * r.nyb);
      host_conv_direct_forward(&q, batch, x, r.w, r.b, y, fresh_ws(&r));
      differ += memcmp(y, want_y, sizeof(float) * r.nyb) != 0;
      /* the ReLU epilogue (SwkConv.relu) as the ReLU kernel computes it, on the last pass's
       * sums only; the input gradients below must ignore it */
      q.relu = true, q.relu_slope = blocks % 2 ? 0.25f : 0;
      host_conv_direct_forward(&q, batch, x, r.w, r.b, y, r.ws);
      differ += unlike_relu(y, want_y, want_y, q.relu_slope, r.nyb);
      if (planar) continue;
      memset(dx, 0xff, sizeof(float) * r.nxb);
      host_conv_direct_input_gradient(&q, batch, r.w, r.dyb, dx, false, NULL, fresh_ws(&r));
      differ += memcmp(dx, want_dx, sizeof(float) * r.nxb) != 0;
      memcpy(dx, base, sizeof(float) * r.nxb);
      host_conv_direct_input_gradient(&q, batch, r.w, r.dyb, dx, true, NULL, fresh_ws(&r));
      differ += memcmp(dx, want_added, sizeof(float) * r.nxb) != 0;
      /* masked by a ReLU's output (SwkConv.dx_relu) as its backward computes it, written and
       * added to, pixels no tap reaches (a strided 1x1's) included */
      q.dx_relu_slope = blocks % 2 ? 0.25f : 0;
      for (int add = 0; add < 2; add++) {
        const float *want = add ? want_added : want_dx;
        memcpy(dx, base, sizeof(float) * r.nxb);
        host_conv_direct_input_gradient(&q, batch, r.w, r.dyb, dx, add, mask, fresh_ws(&r));
        differ += unlike_relu(dx, mask, want, q.dx_relu_slope, r.nxb);
      }
    }
  if (differ)
    fprintf(stderr,
            "FAIL: %s direct tilings differ from the rule %d times, %dx%dx%d -> %d k%d s%d\n", isa,
            differ, p.ci, p.h, p.w, p.co, p.kh, p.sh);
  CHECK_EQ_INT(differ, 0);
  free(want_y), free(y), free(base), free(want_dx), free(want_added), free(dx), free(mask);
  run_free(&r);
}

static void test_tiling_candidates(void) {
  SwkConv wide = shape(1024, 14, 14, 256, 1, 1, 0), narrow = shape(64, 8, 8, 64, 3, 1, 1);
  int words[HOST_TILINGS_MAX], n = host_direct_tiling_candidates(&wide, 8, words);
  CHECK_EQ_INT(n, 7); /* 64 input blocks: 2 orders x (1 pass, 8, 16, 32 blocks) but the rule */
  HostDirectTiling rule = host_direct_tiling_rule(&wide, 8, false);
  for (int i = 0; i < n; i++) {
    HostDirectTiling t = host_direct_tiling(words[i], &wide, 8, false);
    CHECK(t.blocks || t.filters_outer != rule.filters_outer);
  }
  CHECK_EQ_INT(host_direct_tiling_candidates(&narrow, 8, words), 1); /* 4 blocks: the other order */
  char name[HOST_TILING_NAME_MAX];
  HostDirectTiling filters16 = {.filters_outer = true, .blocks = 16};
  CHECK(!strcmp(host_direct_tiling_name(host_direct_tiling_word(filters16), name), "filters.k16"));
  CHECK(!strcmp(host_direct_tiling_name(host_direct_tiling_word((HostDirectTiling){0}), name),
                "images"));
}

int main(void) {
  swk_set_threads(2);
  test_tiling_candidates();
  for (int i = 0; i < HOST_ISA_COUNT; i++) {
    const char *isa = host_isas[i];
    if (!host_conv_direct_use(isa)) continue;
    for (const Plan *k = plans; k < plans + PLANS; k++) {          /* each where it runs */
      test_conv(k, isa, shape(32, 16, 16, 32, 5, 1, 2), 2, false); /* cifar10_quick conv2 */
      test_conv(k, isa, shape(3, 32, 32, 32, 5, 1, 2), 2, true);   /* its first layer */
      test_conv(k, isa, shape(3, 32, 32, 32, 5, 1, 2), 2, false);  /* blocked: taps in lanes */
      test_conv(k, isa, shape(1, 28, 28, 20, 5, 1, 0), 2, false);  /* LeNet's first layer */
      test_conv(k, isa, shape(2, 13, 13, 16, 11, 4, 2), 1, false); /* rows wider than a tile */
      test_conv(k, isa, shape(8, 9, 9, 3, 5, 1, 2), 2, false);     /* dX from few channels */
      test_conv(k, isa, shape(8, 11, 11, 2, 5, 2, 2), 2, false);   /* and strided */
      test_conv(k, isa, shape(20, 12, 12, 50, 5, 1, 0), 3, false); /* LeNet conv2: partial blocks */
      test_conv(k, isa, shape(16, 15, 15, 48, 3, 2, 1), 2, false); /* stride 2, odd block count */
      test_conv(k, isa, shape(64, 7, 7, 16, 1, 1, 0), 2, false);   /* 1x1, one output block */
      test_conv(k, isa, shape(32, 14, 14, 48, 1, 1, 0), 2, false); /* 1x1: one row of 196 */
      test_conv(k, isa, shape(3, 37, 37, 64, 7, 2, 3), 1, true);   /* ResNet's first layer */
      test_conv(k, isa, shape(16, 9, 40, 32, 3, 1, 1), 2, false);  /* strips and a tail */
      test_conv(k, isa, shape(24, 6, 5, 40, 5, 1, 3), 2, false);   /* padding wider than taps */
      test_conv(k, isa, shape(20, 13, 11, 36, 3, 1, 1), 2, false); /* tiles cut by the edges */
      test_conv(k, isa, shape(3, 10, 10, 16, 3, 1, 1), 1, false);  /* few input channels */
      test_conv(k, isa, shape(18, 9, 9, 17, 3, 1, 0), 2, false);   /* no padding */
      test_conv(k, isa, shape(17, 7, 7, 33, 3, 1, 2), 2, false);   /* padding 2 */
      test_conv(k, isa, shape(16, 8, 8, 512, 3, 1, 1), 8, false);  /* Winograd: two passes */
      test_conv(k, isa, shape(32, 16, 16, 32, 5, 1, 2), 9, false); /* its dW in 2 sets, 3 passes */
      /* strided input gradients, by phases */
      test_conv(k, isa, shape(32, 14, 14, 48, 1, 2, 0), 2, false); /* ResNet's projections */
      test_conv(k, isa, shape(16, 16, 16, 32, 3, 2, 1), 2, false); /* its strided 3x3 */
      test_conv(k, isa, shape(8, 37, 37, 16, 7, 2, 3), 1, false);  /* its first layer, blocked */
      test_conv(k, isa, shape(12, 11, 13, 20, 5, 3, 2), 2, false); /* stride 3 */
      test_conv(k, isa, shape(16, 9, 9, 16, 2, 2, 0), 2, false);   /* a tap per phase */
      test_conv(k, isa, shape(8, 10, 10, 16, 3, 2, 3), 2, false);  /* padding as wide as taps */
      test_conv(k, isa, shape(8, 9, 10, 16, 1, 3, 0), 2, false);   /* phases without taps */
      /* strips of two rows (direct_tiling.h): ResNet's last stage, 7 pixels a row */
      test_conv(k, isa, shape(32, 14, 14, 48, 3, 2, 1), 2, false); /* its first 3x3, stride 2 */
      test_conv(k, isa, shape(40, 7, 7, 36, 3, 1, 1), 3, false);   /* its 3x3: an unpaired row */
      test_conv(k, isa, shape(20, 6, 6, 24, 3, 2, 1), 2, false);   /* 3 a row (AVX2's strips) */
      test_conv(k, isa, shape(24, 8, 3, 20, 3, 1, 2), 2, false);   /* rows alone top and bottom */
      /* the weight gradient's visits of several small images, the last visit short */
      test_conv(k, isa, shape(20, 14, 14, 36, 3, 2, 1), 5, false); /* 3x3 stride 2: 49 pixels */
      test_conv(k, isa, shape(36, 5, 5, 20, 1, 1, 0), 7, false);   /* 1x1: 25 pixels in a row */
      /* visits of one row of 130 (large images): a tap's first and last rows outside (its sums
       * start at 0 on a visit that adds nothing) */
      test_conv(k, isa, shape(8, 6, 130, 16, 3, 1, 1), 2, false);
      /* a strided 1x1's copies of the pixels it reads: 6 images a visit, then 1 */
      test_conv(k, isa, shape(160, 28, 28, 48, 1, 2, 0), 7, false);
      /* strips of one row of two images (images read in place), the last image alone */
      test_conv(k, isa, shape(20, 7, 7, 24, 1, 2, 0), 3, false);
    }
    /* dW of 4.3 MB (3x3, partial last blocks both ways) and 4.4 MB (5x5) */
    test_streamed_weight_gradient(isa, shape(350, 5, 5, 340, 3, 2, 1), 2);
    test_streamed_weight_gradient(isa, shape(200, 5, 5, 220, 5, 1, 2), 1);
    test_tilings(isa, shape(40, 9, 9, 48, 3, 1, 1), 2, false);   /* padded copies, 3 blocks */
    test_tilings(isa, shape(48, 7, 7, 40, 1, 1, 0), 3, false);   /* 1x1 as one row */
    test_tilings(isa, shape(40, 11, 11, 36, 3, 2, 1), 2, false); /* phases of dX */
    test_tilings(isa, shape(33, 5, 6, 70, 3, 1, 2), 1, false);   /* a partial block */
    test_tilings(isa, shape(3, 20, 20, 40, 5, 1, 2), 2, true);   /* a first layer's planes */
    test_tilings(isa, shape(24, 14, 14, 40, 3, 2, 1), 3, false); /* image pairs, batch padded */
    test_tilings(isa, shape(40, 14, 14, 36, 3, 2, 1), 2, false); /* two rows a strip */
    test_tilings(isa, shape(40, 8, 8, 36, 1, 2, 0), 2, false);   /* dX pixels no tap reaches */
  }
  host_conv_direct_use(host_isa_choice());
  for (const Plan *k = plans; k < plans + PLANS; k++) {
    test_threads(k, shape(32, 16, 16, 32, 5, 1, 2), 6);  /* own passes */
    test_threads(k, shape(32, 16, 16, 32, 5, 1, 2), 17); /* dW in 4 sets, 5 passes */
    test_threads(k, shape(20, 13, 11, 36, 3, 1, 1), 5);  /* own passes, edge tiles */
    test_threads(k, shape(16, 8, 8, 512, 3, 1, 1), 8);   /* shared passes (F(4x4)) */
    test_threads(k, shape(64, 4, 4, 256, 3, 1, 1), 3);   /* one shared pass; direct: filters
                                                            outer, groups shared */
    test_threads(k, shape(24, 7, 7, 80, 3, 2, 1), 2);    /* direct: filters outer, a group of
                                                            one output block */
    SwkConv phases = shape(40, 11, 11, 36, 3, 2, 1);     /* direct: dX's 4 phases filters outer, */
    phases.dgrad_tiling = /* packed block by block as the first reaches them, 3 blocks */
        host_direct_tiling_word((HostDirectTiling){.filters_outer = true});
    test_threads(k, phases, 3);
    test_finite_differences(k, shape(5, 6, 7, 18, 3, 1, 1), 2);
    test_finite_differences(k, shape(17, 5, 5, 4, 5, 1, 2), 1);
    test_finite_differences(k, shape(6, 7, 7, 18, 3, 2, 1), 2);
    test_finite_differences(k, shape(20, 6, 6, 9, 1, 2, 0), 1);
    test_finite_differences(k, shape(6, 8, 8, 10, 1, 2, 0), 3); /* image pairs */
    test_finite_differences(k, shape(3, 9, 9, 20, 7, 2, 3), 1);
  }
  return check_report();
}
