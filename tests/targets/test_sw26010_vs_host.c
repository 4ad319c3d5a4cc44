/* The sw26010 kernel set (on its emulator) against the host's, kernel by kernel, on the same
 * random inputs: a copy of the host set's archive with its kernels renamed ref_*
 * (tests/CMakeLists.txt). Shapes are larger than the finite-difference tests' so that every
 * CPE kernel's task splitting shows: several bands of a plane, lane chunks, channels beyond
 * 64 CPEs, pieces of one image's plane, and the shapes that fall back to the MPE. Kernels whose
 * arithmetic is the host's in the same order must agree exactly; the products and the loss
 * (other summation orders) to float rounding. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "shapes.h"
#include "kernels.h"
#include "rng.h"

#define REF(name) __typeof__(swk_##name) ref_##name;
/* clang-format off */
REF(conv_workspace) REF(conv_forward) REF(conv_backward) REF(conv_implicit_forward)
REF(conv_implicit_backward) REF(conv_implicit_workspace) REF(to_rcnb) REF(to_bnrc)
REF(pool_forward) REF(pool_backward) REF(pool_rcnb_forward) REF(pool_rcnb_backward)
REF(fc_forward) REF(fc_backward) REF(fc_workspace) REF(batchnorm_forward) REF(batchnorm_recompute) REF(batchnorm_backward) REF(softmax_loss_forward)
REF(softmax_loss_backward) REF(lrn_forward) REF(lrn_backward) REF(dropout_forward)
REF(dropout_backward) REF(concat_forward) REF(concat_backward) REF(add_forward) REF(add_backward)
REF(accuracy_forward) REF(sgd_update) REF(sgd_apply) REF(lars_update) REF(easgd_elastic) REF(sum_into) REF(scale)
/* clang-format on */
#define REF_ACTIVATION(unused_a, unused_b, name, reads) REF(name##_forward) REF(name##_backward)
                                    SWN_ACTIVATIONS(REF_ACTIVATION, , )

                                        static uint64_t rng_state = 777;

static float *random_array(int64_t n) {
  float *a = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) a[i] = swn_uniform(swn_mix64(rng_state++)) * 2.0f - 1.0f;
  return a;
}

static float *copy(const float *a, int64_t n) {
  float *c = malloc(sizeof(float) * (size_t)(n ? n : 1));
  memcpy(c, a, sizeof(float) * (size_t)n);
  return c;
}

static float *zeros(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(float)); }

/* sw against ref: exactly (tolerance 0) or within tolerance times the largest |ref|. */
static void agree(const char *what, const float *sw, const float *ref, int64_t n,
                  double tolerance) {
  double worst = 0, scale = 1e-30;
  for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
  for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)sw[i] - ref[i]));
  bool ok =
      tolerance == 0 ? memcmp(sw, ref, sizeof(float) * (size_t)n) == 0 : worst <= tolerance * scale;
  if (!ok) fprintf(stderr, "%s: differs by %.3g (largest |ref| %.3g)\n", what, worst, scale);
  CHECK(ok);
}

enum { EXACT = 0 };
static const double PRODUCT = 2e-6; /* sums in another order: a few float roundings of the scale */
/* Weight and bias gradients sum `terms` floats (pixels x images) mostly one by one on the CPEs,
 * in blocks and vector lanes on the host: the orders' roundings differ by about sqrt(terms). */
static double long_sum(int64_t terms) { return fmax(PRODUCT, FLT_EPSILON * sqrt((double)terms)); }
/* expf, tanhf and multiply-adds: the host's vectorised activation loops (omp simd) and the
 * CPEs' scalar code may round the last place differently (fused or not; seen under ASan) */
static const double LAST_PLACE = 5e-7;

/* ------------------------------------------------------------------ convolution */

/* The convolutions' kernels with each of the sw26010 set's tiling words (its rule, single- and
 * double-buffered: kernels/args.h; the host's ignores them). */
static void with_tilings(void (*test)(SwkConv, int), SwkConv p, int batch) {
  for (int word = 0; word < 3; word++) {
    p.forward_tiling = p.dgrad_tiling = p.wgrad_tiling = word;
    test(p, batch);
  }
}

static void conv_explicit_once(SwkConv p, int batch) {
  int64_t nx = (int64_t)batch * p.ci * p.h * p.w, ny = (int64_t)batch * p.co * p.ho * p.wo;
  int64_t nw = (int64_t)p.co * p.ci / p.groups * p.kh * p.kw;
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.co),
        *dy = random_array(ny);
  float *dx0 = random_array(nx), *dx[2] = {copy(dx0, nx), copy(dx0, nx)};
  float *y[2] = {zeros(ny), zeros(ny)}, *dw[2] = {zeros(nw), zeros(nw)},
        *db[2] = {zeros(p.co), zeros(p.co)};
  float *ws[2] = {zeros((int64_t)swk_conv_workspace(&p)), zeros((int64_t)ref_conv_workspace(&p))};
  swk_conv_forward(&p, batch, x, w, b, y[0], ws[0]);
  ref_conv_forward(&p, batch, x, w, b, y[1], ws[1]);
  swk_conv_backward(&p, batch, x, w, dy, dx[0], true, dw[0], db[0], 1, 1, 0, ws[0]);
  ref_conv_backward(&p, batch, x, w, dy, dx[1], true, dw[1], db[1], 1, 1, 0, ws[1]);
  agree("explicit conv y", y[0], y[1], ny, PRODUCT);
  agree("explicit conv dx (added)", dx[0], dx[1], nx, PRODUCT);
  agree("explicit conv dw", dw[0], dw[1], nw, long_sum((int64_t)batch * p.ho * p.wo));
  agree("explicit conv db", db[0], db[1], p.co, long_sum((int64_t)batch * p.ho * p.wo));
  float *all[] = {x,    w,     b,     dy,    dx0,   dx[0], dx[1], y[0],
                  y[1], dw[0], dw[1], db[0], db[1], ws[0], ws[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

/* On (R,C,N,B) data made by each set's own transform, which must agree exactly. */
static void conv_implicit_once(SwkConv p, int batch) {
  int64_t nx = (int64_t)batch * p.ci * p.h * p.w, ny = (int64_t)batch * p.co * p.ho * p.wo;
  int64_t nw = (int64_t)p.co * p.ci * p.kh * p.kw;
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.co),
        *dy = random_array(ny);
  float *xr[2] = {zeros(nx), zeros(nx)}, *y[2] = {zeros(ny), zeros(ny)},
        *dx[2] = {zeros(nx), zeros(nx)};
  float *dw[2] = {zeros(nw), zeros(nw)}, *db[2] = {zeros(p.co), zeros(p.co)};
  float *ws[2] = {zeros((int64_t)swk_conv_implicit_workspace(&p, batch)),
                  zeros((int64_t)ref_conv_implicit_workspace(&p, batch))};
  swk_to_rcnb(p.ci, p.h, p.w, batch, x, xr[0], false);
  ref_to_rcnb(p.ci, p.h, p.w, batch, x, xr[1], false);
  agree("to_rcnb", xr[0], xr[1], nx, EXACT);
  swk_conv_implicit_forward(&p, batch, xr[0], w, b, y[0], ws[0]);
  ref_conv_implicit_forward(&p, batch, xr[1], w, b, y[1], ws[1]);
  agree("implicit conv y", y[0], y[1], ny, PRODUCT);
  swk_conv_implicit_backward(&p, batch, xr[0], w, dy, dx[0], false, dw[0], db[0], 1, 1, 0, ws[0]);
  ref_conv_implicit_backward(&p, batch, xr[1], w, dy, dx[1], false, dw[1], db[1], 1, 1, 0, ws[1]);
  agree("implicit conv dx", dx[0], dx[1], nx, PRODUCT);
  agree("implicit conv dw", dw[0], dw[1], nw, PRODUCT);
  agree("implicit conv db", db[0], db[1], p.co, PRODUCT);
  float *back[2] = {random_array(nx), NULL};
  back[1] = copy(back[0], nx);
  swk_to_bnrc(p.ci, p.h, p.w, batch, dx[0], back[0], true);
  ref_to_bnrc(p.ci, p.h, p.w, batch, dx[0], back[1], true);
  agree("to_bnrc (added)", back[0], back[1], nx, EXACT);
  float *all[] = {x,     w,     b,     dy,    xr[0], xr[1], y[0],  y[1],    dx[0],
                  dx[1], dw[0], dw[1], db[0], db[1], ws[0], ws[1], back[0], back[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void conv_explicit(SwkConv p, int batch) { with_tilings(conv_explicit_once, p, batch); }
static void conv_implicit(SwkConv p, int batch) { with_tilings(conv_implicit_once, p, batch); }

/* ------------------------------------------------------------------ pooling */

static void pool(SwkPool p, int batch, bool rcnb) {
  int64_t nx = (int64_t)batch * p.c * p.h * p.w, ny = (int64_t)batch * p.c * p.ho * p.wo;
  float *x = random_array(nx), *dy = random_array(ny), *dx0 = random_array(nx);
  float *y[2] = {zeros(ny), zeros(ny)}, *dx[2] = {copy(dx0, nx), copy(dx0, nx)};
  int32_t *am[2] = {calloc((size_t)ny, 4), calloc((size_t)ny, 4)};
  char what[96];
  snprintf(what, sizeof what, "%s pool %s %dx%d %dx%d", p.max ? "max" : "average",
           rcnb ? "rcnb" : "bnrc", p.h, p.w, p.kh, p.kw);
  (rcnb ? swk_pool_rcnb_forward : swk_pool_forward)(&p, batch, x, y[0], am[0]);
  (rcnb ? ref_pool_rcnb_forward : ref_pool_forward)(&p, batch, x, y[1], am[1]);
  agree(what, y[0], y[1], ny, EXACT);
  if (p.max) CHECK(memcmp(am[0], am[1], 4 * (size_t)ny) == 0);
  /* backward from the same argmax, added to dx */
  (rcnb ? swk_pool_rcnb_backward : swk_pool_backward)(&p, batch, dy, am[1], dx[0], true);
  (rcnb ? ref_pool_rcnb_backward : ref_pool_backward)(&p, batch, dy, am[1], dx[1], true);
  agree(what, dx[0], dx[1], nx, EXACT);
  free(x), free(dy), free(dx0), free(y[0]), free(y[1]), free(dx[0]), free(dx[1]), free(am[0]),
      free(am[1]);
}

/* ------------------------------------------------------------------ the rest */

static void fc(SwkFc p, int batch) {
  int64_t nx = (int64_t)batch * p.in, ny = (int64_t)batch * p.out, nw = (int64_t)p.in * p.out;
  float *x = random_array(nx), *w = random_array(nw), *b = random_array(p.out),
        *dy = random_array(ny);
  float *y[2] = {zeros(ny), zeros(ny)}, *dx[2] = {zeros(nx), zeros(nx)},
        *dw[2] = {zeros(nw), zeros(nw)};
  float *db[2] = {zeros(p.out), zeros(p.out)};
  float *ws[2] = {zeros((int64_t)swk_fc_workspace(&p)), zeros((int64_t)ref_fc_workspace(&p))};
  swk_fc_forward(&p, batch, x, w, b, y[0], ws[0]);
  ref_fc_forward(&p, batch, x, w, b, y[1], ws[1]);
  swk_fc_backward(&p, batch, x, w, dy, dx[0], false, dw[0], db[0], 1, 1, 0, ws[0]);
  ref_fc_backward(&p, batch, x, w, dy, dx[1], false, dw[1], db[1], 1, 1, 0, ws[1]);
  agree("fc y", y[0], y[1], ny, PRODUCT);
  agree("fc dx", dx[0], dx[1], nx, PRODUCT);
  agree("fc dw", dw[0], dw[1], nw, PRODUCT);
  agree("fc db", db[0], db[1], p.out, PRODUCT);
  float *all[] = {x, w, b, dy, y[0], y[1], dx[0], dx[1], dw[0], dw[1], db[0], db[1], ws[0], ws[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

typedef void (*ActFwd)(const SwkAct *, int, const float *, float *);
typedef void (*ActBwd)(const SwkAct *, int, const float *, const float *, float *, bool);

/* Backward reads x or y as the row says (runtime/activations.h). */
static void activation(const char *name, bool reads_input, double tolerance, ActFwd fwd,
                       ActFwd ref_fwd, ActBwd bwd, ActBwd ref_bwd) {
  SwkAct p = {.n = 2500, .slope = 0.1f};
  int batch = 3;
  int64_t n = p.n * batch;
  float *x = random_array(n), *dy = random_array(n), *dx0 = random_array(n);
  float *y[2] = {zeros(n), zeros(n)}, *dx[2] = {copy(dx0, n), copy(dx0, n)};
  fwd(&p, batch, x, y[0]);
  ref_fwd(&p, batch, x, y[1]);
  agree(name, y[0], y[1], n, tolerance);
  const float *v = reads_input ? x : y[1];
  bwd(&p, batch, v, dy, dx[0], true);
  ref_bwd(&p, batch, v, dy, dx[1], true);
  agree(name, dx[0], dx[1], n, tolerance);
  free(x), free(dy), free(dx0), free(y[0]), free(y[1]), free(dx[0]), free(dx[1]);
}

static void batchnorm(SwkBatchNorm p, int batch) {
  int64_t n = (int64_t)batch * p.c * p.hw;
  float *x = random_array(n), *scale = random_array(p.c), *shift = random_array(p.c),
        *dy = random_array(n);
  float *running0 = random_array(2 * p.c), *dx0 = random_array(n);
  for (int c = 0; c < p.c; c++) running0[p.c + c] = 1 + fabsf(running0[p.c + c]); /* a variance */
  float *y[2] = {zeros(n), zeros(n)}, *saved[2] = {zeros(2 * p.c), zeros(2 * p.c)};
  float *running[2] = {copy(running0, 2 * p.c), copy(running0, 2 * p.c)},
        *dx[2] = {copy(dx0, n), copy(dx0, n)};
  float *ds[2] = {zeros(p.c), zeros(p.c)}, *dsh[2] = {zeros(p.c), zeros(p.c)};
  swk_batchnorm_forward(&p, batch, true, x, scale, shift, y[0], saved[0], running[0]);
  ref_batchnorm_forward(&p, batch, true, x, scale, shift, y[1], saved[1], running[1]);
  agree("batchnorm y (training)", y[0], y[1], n, EXACT);
  agree("batchnorm saved statistics", saved[0], saved[1], 2 * p.c, EXACT);
  agree("batchnorm running statistics", running[0], running[1], 2 * p.c, EXACT);
  swk_batchnorm_backward(&p, batch, x, scale, dy, saved[1], dx[0], true, ds[0], dsh[0], 1, 1, 0);
  ref_batchnorm_backward(&p, batch, x, scale, dy, saved[1], dx[1], true, ds[1], dsh[1], 1, 1, 0);
  agree("batchnorm dx (added)", dx[0], dx[1], n, EXACT);
  agree("batchnorm dscale", ds[0], ds[1], p.c, EXACT);
  agree("batchnorm dshift", dsh[0], dsh[1], p.c, EXACT);
  swk_batchnorm_recompute(&p, batch, x, scale, shift, saved[1], y[0]);
  ref_batchnorm_recompute(&p, batch, x, scale, shift, saved[1], y[1]);
  agree("batchnorm y (recomputed)", y[0], y[1], n, EXACT);
  swk_batchnorm_forward(&p, batch, false, x, scale, shift, y[0], NULL, running0);
  ref_batchnorm_forward(&p, batch, false, x, scale, shift, y[1], NULL, running0);
  agree("batchnorm y (inference)", y[0], y[1], n, EXACT);
  float *all[] = {x,        scale,      shift,      dy,    running0, dx0,   y[0],  y[1],   saved[0],
                  saved[1], running[0], running[1], dx[0], dx[1],    ds[0], ds[1], dsh[0], dsh[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void softmax_loss(int classes, int batch) {
  SwkSoftmaxLoss p = {.classes = classes, .loss_weight = 0.7f};
  int64_t n = (int64_t)classes * batch;
  float *s = random_array(n), *prob[2] = {zeros(n), zeros(n)}, *ds[2] = {zeros(n), zeros(n)},
        loss[2];
  int32_t *labels = malloc(sizeof(int32_t) * (size_t)batch);
  for (int i = 0; i < batch; i++) labels[i] = (int32_t)(swn_mix64(rng_state++) % (uint64_t)classes);
  swk_softmax_loss_forward(&p, batch, s, labels, prob[0], &loss[0]);
  ref_softmax_loss_forward(&p, batch, s, labels, prob[1], &loss[1]);
  agree("softmax probabilities", prob[0], prob[1], n, EXACT);
  agree("softmax loss", &loss[0], &loss[1], 1, PRODUCT);
  swk_softmax_loss_backward(&p, batch, prob[1], labels, ds[0], false);
  ref_softmax_loss_backward(&p, batch, prob[1], labels, ds[1], false);
  agree("softmax dscores", ds[0], ds[1], n, EXACT);
  free(s), free(prob[0]), free(prob[1]), free(ds[0]), free(ds[1]), free(labels);
}

/* ------------------------------------------------------------------ LRN, dropout, sums */

static void lrn(SwkLrn p, int batch) {
  int64_t n = (int64_t)batch * p.c * p.hw;
  float *x = random_array(n), *dy = random_array(n), *dx0 = random_array(n);
  float *y[2] = {zeros(n), zeros(n)}, *scale[2] = {zeros(n), zeros(n)},
        *dx[2] = {copy(dx0, n), copy(dx0, n)};
  swk_lrn_forward(&p, batch, x, y[0], scale[0]);
  ref_lrn_forward(&p, batch, x, y[1], scale[1]);
  char what[64];
  snprintf(what, sizeof what, "lrn %d channels, %d pixels", p.c, p.hw);
  agree(what, scale[0], scale[1], n, EXACT);
  agree(what, y[0], y[1], n, EXACT);
  swk_lrn_backward(&p, batch, x, y[1], scale[1], dy, dx[0], true);
  ref_lrn_backward(&p, batch, x, y[1], scale[1], dy, dx[1], true);
  agree(what, dx[0], dx[1], n, EXACT);
  float *all[] = {x, dy, dx0, y[0], y[1], scale[0], scale[1], dx[0], dx[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void dropout(int64_t per_image, int batch) {
  SwkDropout p = {.n = per_image, .ratio = 0.3f, .layer = 5};
  int64_t n = per_image * batch;
  float *x = random_array(n), *dx0 = random_array(n);
  float *y[2] = {zeros(n), zeros(n)}, *dx[2] = {copy(dx0, n), copy(dx0, n)};
  for (int train = 0; train <= 1; train++) {
    swk_dropout_forward(&p, batch, train, 42, 7, 100, x, y[0]);
    ref_dropout_forward(&p, batch, train, 42, 7, 100, x, y[1]);
    agree(train ? "dropout (training)" : "dropout (inference)", y[0], y[1], n, EXACT);
  }
  swk_dropout_backward(&p, batch, 42, 7, 100, x, dx[0], true);
  ref_dropout_backward(&p, batch, 42, 7, 100, x, dx[1], true);
  /* the masks agree exactly (forward, above); dx + g may be fused or not, as each build's
   * compiler contracts it (they differed in the last place on an AVX2 build) */
  agree("dropout dx (added)", dx[0], dx[1], n, LAST_PLACE);
  free(x), free(dx0), free(y[0]), free(y[1]), free(dx[0]), free(dx[1]);
}

/* n inputs of sizes[i] elements per image; input 1's gradient not wanted, the others added
 * or written in turn. */
static void concat(int n, const int64_t *sizes, int batch) {
  int64_t out = 0;
  for (int i = 0; i < n; i++) out += sizes[i];
  float *x[16], *dx[2][16], *dx0[16];
  bool add[16];
  for (int i = 0; i < n; i++) {
    int64_t e = sizes[i] * batch;
    x[i] = random_array(e), dx0[i] = random_array(e);
    dx[0][i] = i == 1 ? NULL : copy(dx0[i], e), dx[1][i] = i == 1 ? NULL : copy(dx0[i], e);
    add[i] = i % 2 == 0;
  }
  float *y[2] = {zeros(out * batch), zeros(out * batch)}, *dy = random_array(out * batch);
  swk_concat_forward(n, sizes, batch, (const float *const *)x, y[0]);
  ref_concat_forward(n, sizes, batch, (const float *const *)x, y[1]);
  agree("concat", y[0], y[1], out * batch, EXACT);
  swk_concat_backward(n, sizes, batch, dy, dx[0], add);
  ref_concat_backward(n, sizes, batch, dy, dx[1], add);
  for (int i = 0; i < n; i++) {
    if (i != 1) agree("concat dx", dx[0][i], dx[1][i], sizes[i] * batch, EXACT);
    free(x[i]), free(dx0[i]), free(dx[0][i]), free(dx[1][i]);
  }
  free(y[0]), free(y[1]), free(dy);
}

static void add(int n, int64_t size, int batch, bool relu) {
  int64_t e = size * batch;
  float *x[16], *dx[2][16], *dx0[16];
  bool adds[16];
  for (int i = 0; i < n; i++) {
    x[i] = random_array(e), dx0[i] = random_array(e);
    dx[0][i] = copy(dx0[i], e), dx[1][i] = copy(dx0[i], e);
    adds[i] = i % 2 == 1;
  }
  float *y[2] = {zeros(e), zeros(e)}, *dy = random_array(e);
  swk_add_forward(n, size, batch, (const float *const *)x, y[0], relu, 0);
  ref_add_forward(n, size, batch, (const float *const *)x, y[1], relu, 0);
  char what[48];
  snprintf(what, sizeof what, "sum of %d", n);
  agree(what, y[0], y[1], e, EXACT);
  swk_add_backward(n, size, batch, dy, dx[0], adds);
  ref_add_backward(n, size, batch, dy, dx[1], adds);
  for (int i = 0; i < n; i++) {
    agree(what, dx[0][i], dx[1][i], e, EXACT);
    free(x[i]), free(dx0[i]), free(dx[0][i]), free(dx[1][i]);
  }
  free(y[0]), free(y[1]), free(dy);
}

/* Random scores with ties, a NaN score and a NaN label score. */
static void accuracy(int classes, int top, int batch) {
  int64_t n = (int64_t)classes * batch;
  float *s = random_array(n), acc[2];
  for (int64_t i = 0; i < n; i += 7) s[i] = 0.5f;
  int32_t *labels = malloc(sizeof(int32_t) * (size_t)batch);
  for (int i = 0; i < batch; i++) labels[i] = (int32_t)(swn_mix64(rng_state++) % (uint64_t)classes);
  s[3] = NAN;
  s[(int64_t)classes * (batch - 1) + labels[batch - 1]] = NAN;
  swk_accuracy_forward(classes, top, batch, s, labels, &acc[0]);
  ref_accuracy_forward(classes, top, batch, s, labels, &acc[1]);
  agree("accuracy", &acc[0], &acc[1], 1, EXACT);
  if (batch >= 100) CHECK(acc[1] > 0 && acc[1] < 1); /* the random scores: about 1 / classes */
  free(s), free(labels);
}

static void optimizer_and_collectives(void) {
  int64_t n = 5003; /* the CPEs' vectors and a scalar tail of 3 */
  float *w0 = random_array(n), *g = random_array(n), *v0 = random_array(n), *sum = random_array(n);
  float *w[2] = {copy(w0, n), copy(w0, n)}, *v[2] = {copy(v0, n), copy(v0, n)};
  swk_sgd_update(n, 0.01f, 5e-4f, 0.9f, w[0], g, v[0]);
  ref_sgd_update(n, 0.01f, 5e-4f, 0.9f, w[1], g, v[1]);
  agree("sgd weights", w[0], w[1], n, EXACT);
  agree("sgd momentum", v[0], v[1], n, EXACT);
  swk_sgd_apply(n, 0.01f, 5e-4f, w[0], v[0]); /* momentum that backward added gradients into */
  ref_sgd_apply(n, 0.01f, 5e-4f, w[1], v[1]);
  agree("sgd with folded gradients: weights", w[0], w[1], n, EXACT);
  agree("sgd with folded gradients: momentum", v[0], v[1], n, EXACT);
  swk_lars_update(n, 0.01f, 5e-4f, 0.9f, 0.02f, w[0], g, v[0]); /* norms summed in another order */
  ref_lars_update(n, 0.01f, 5e-4f, 0.9f, 0.02f, w[1], g, v[1]);
  agree("lars weights", w[0], w[1], n, PRODUCT);
  agree("lars momentum", v[0], v[1], n, PRODUCT);
  float *gs[2] = {copy(g, n), copy(g, n)};
  swk_easgd_elastic(n, 0.5f, 0.1f, 3, w0, sum, v[0], gs[0]);
  ref_easgd_elastic(n, 0.5f, 0.1f, 3, w0, sum, v[1], gs[1]);
  agree("easgd gradient", gs[0], gs[1], n, EXACT);
  agree("easgd center", v[0], v[1], n, EXACT);
  swk_sum_into(n, w[0], g), swk_scale(n, w[0], 0.25f);
  ref_sum_into(n, w[1], g), ref_scale(n, w[1], 0.25f);
  agree("allreduce sum and scale", w[0], w[1], n, EXACT);
  float *all[] = {w0, g, v0, sum, w[0], w[1], v[0], v[1], gs[0], gs[1]};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

int main(void) {
  conv_explicit(conv_row(16, 12, 12, 24, 3, 3, 1, 1, 1, 1, 1, true), 5);
  conv_explicit(conv_row(8, 11, 9, 12, 3, 3, 2, 2, 0, 0, 2, true), 3);
  /* pointwise, grouped: the GEMMs on x and dx in place (dx added), the whole batch at once */
  conv_explicit(conv_row(64, 7, 9, 48, 1, 1, 1, 1, 0, 0, 2, true), 5);
  /* a row's kw runs of columns (3 x 3000 floats) larger than im2col's buffer */
  conv_explicit(conv_row(2, 3, 3000, 3, 3, 3, 1, 1, 1, 1, 1, true), 2);
  conv_explicit(dilated(conv_row(8, 13, 12, 12, 3, 3, 1, 1, 2, 2, 1, true), 2, 2), 3);
  conv_explicit(dilated(conv_row(4, 14, 11, 6, 3, 2, 2, 1, 1, 2, 2, true), 3, 2), 2);
  conv_implicit(conv_row(20, 9, 9, 36, 3, 3, 1, 1, 1, 1, 1, true), 24);
  conv_implicit(conv_row(3, 10, 11, 8, 5, 3, 2, 2, 1, 0, 1, false), 7);
  /* transforms in 4x4 blocks of vectors: 8 images of 16 pixels each way (to_bnrc adding) */
  conv_implicit(conv_row(8, 4, 4, 12, 3, 3, 1, 1, 1, 1, 1, true), 8);
  /* rows longer than a run (SW_IMPLICIT_RUN_MAX pixels), and a filter row longer than one (taps) */
  conv_implicit(conv_row(12, 6, 21, 20, 3, 3, 1, 1, 1, 1, 1, true), 9);
  conv_implicit(conv_row(8, 3, 40, 8, 1, 19, 1, 2, 0, 3, 1, true), 5);
  for (int max = 0; max <= 1; max++) {
    /* 100x100: two bands of rows each way; 7000 and 4000 wide: blocks of columns (overlapping
     * windows and padding at the blocks' edges in the second); 1200 lanes: two chunks */
    pool(pool_floor_row(3, 100, 100, 3, 3, 2, 2, 1, 1, max), 2, false);
    pool(pool_row(1, 3, 7000, 2, 2, 2, 2, 0, 0, max), 1, false);
    pool(pool_row(2, 5, 4000, 3, 3, 1, 1, 1, 1, max), 2, false);
    pool(pool_row(40, 9, 9, 3, 3, 2, 2, 1, 1, max), 30, true);
    pool(pool_row(5, 8, 8, 2, 2, 2, 2, 0, 0, max), 4, true);
  }
  fc((SwkFc){.in = 300, .out = 70, .bias = true}, 40);
#define TEST_ACTIVATION(unused_a, unused_b, name, reads)                                           \
  activation(#name, SWN_READS_##reads, LAST_PLACE, swk_##name##_forward, ref_##name##_forward,     \
             swk_##name##_backward, ref_##name##_backward);
  SWN_ACTIVATIONS(TEST_ACTIVATION, , )
  /* a plane in several pieces; many images per strided piece, more channels than CPEs */
  batchnorm((SwkBatchNorm){.c = 5, .hw = 1500, .eps = 1e-5f, .momentum = 0.9f, .affine = true}, 3);
  batchnorm((SwkBatchNorm){.c = 70, .hw = 10, .eps = 1e-5f, .momentum = 0.9f, .affine = false},
            130);
  batchnorm((SwkBatchNorm){.c = 5,
                           .hw = 300,
                           .eps = 1e-5f,
                           .momentum = 0.9f,
                           .affine = true,
                           .relu = true,
                           .relu_slope = 0.1f},
            3);          /* the ReLU epilogue: the ReLU kernel after the CPEs' */
  softmax_loss(10, 150); /* several images per CPE, the loss reduced over the mesh */
  softmax_loss(5000, 3); /* more classes than the LDM holds: on the MPE */
  /* one task per image; a plane in uneven pieces; more channels than one pixel fits: the MPE */
  lrn((SwkLrn){.c = 6, .hw = 49, .size = 5, .alpha = 1e-2f, .beta = 0.75f, .k = 2}, 3);
  lrn((SwkLrn){.c = 96, .hw = 301, .size = 5, .alpha = 1e-4f, .beta = 0.75f, .k = 1}, 2);
  lrn((SwkLrn){.c = 3000, .hw = 2, .size = 3, .alpha = 1e-2f, .beta = 0.5f, .k = 1}, 1);
  lrn((SwkLrn){.c = 7, .hw = 67, .size = 3, .alpha = 1e-2f, .beta = 0.6f, .k = 1}, 2); /* powf */
  dropout(1500, 3); /* chunks across images */
  concat(3, (const int64_t[]){100, 2500, 7}, 5);
  concat(10, (const int64_t[]){3, 1, 4, 1, 5, 9, 2, 6, 5, 3}, 70); /* two launches of parts */
  add(2, 3000, 3, false);
  add(11, 200, 2, false); /* two launches: the partial sum carried on */
  add(2, 3000, 3, true);  /* with its ReLU epilogue */
  accuracy(10, 1, 150);
  accuracy(37, 5, 20);
  accuracy(5000, 2, 3); /* on the MPE */
  optimizer_and_collectives();
  return check_report();
}
