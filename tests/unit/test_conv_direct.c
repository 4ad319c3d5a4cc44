/* The host's direct convolution on the channel-blocked layout (targets/host/conv_direct.h)
 * against the definition in double precision, on every instruction set this CPU runs: strips
 * with and without edge pixels, stride 2, channels that fill their last block partly, input in
 * (B,N,R,C) (a first layer) or blocked, one output block or an odd number. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "conv_direct.h"
#include "isa.h"
#include "rng.h"

static uint64_t rng_state = 777;
static float *random_array(size_t n) {
  float *a = malloc(sizeof(float) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) a[i] = swn_uniform(swn_mix64(rng_state++)) * 2.0f - 1.0f;
  return a;
}

/* y (B,N,R,C) = conv(x) + b by the definition. */
static void reference_forward(const SwkConv *p, int batch, const float *x, const float *w,
                              const float *b, float *y) {
  for (int n = 0; n < batch; n++)
    for (int o = 0; o < p->co; o++)
      for (int oh = 0; oh < p->ho; oh++)
        for (int ow = 0; ow < p->wo; ow++) {
          double sum = p->bias ? b[o] : 0;
          for (int c = 0; c < p->ci; c++)
            for (int i = 0; i < p->kh; i++)
              for (int j = 0; j < p->kw; j++) {
                int ih = oh * p->sh - p->ph + i, iw = ow * p->sw - p->pw + j;
                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                sum += (double)x[(((size_t)n * p->ci + c) * p->h + ih) * p->w + iw] *
                       w[(((size_t)o * p->ci + c) * p->kh + i) * p->kw + j];
              }
          y[(((size_t)n * p->co + o) * p->ho + oh) * p->wo + ow] = (float)sum;
        }
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
               .groups = 1,
               .bias = true};
  p.ho = (h + 2 * pad - k) / s + 1, p.wo = (w + 2 * pad - k) / s + 1;
  return p;
}

static void test_forward(const char *isa, SwkConv p, int batch, bool planar) {
  size_t nx = (size_t)batch * p.ci * p.h * p.w, ny = (size_t)batch * p.co * p.ho * p.wo;
  size_t nyb = host_blocked_floats(batch, p.co, p.ho, p.wo);
  float *x = random_array(nx), *w = random_array((size_t)p.co * p.ci * p.kh * p.kw),
        *b = random_array((size_t)p.co), *want = malloc(sizeof(float) * ny),
        *got = malloc(sizeof(float) * ny), *yb = random_array(nyb),
        *xb = malloc(sizeof(float) * host_blocked_floats(batch, p.ci, p.h, p.w)),
        *ws = malloc(sizeof(float) * host_conv_direct_workspace(&p));
  reference_forward(&p, batch, x, w, b, want);
  host_to_blocked(x, batch, p.ci, p.h * p.w, xb);
  host_conv_direct_forward(&p, batch, planar ? x : xb, planar, w, b, yb, ws);
  host_from_blocked(yb, batch, p.co, p.ho * p.wo, got);
  double err = 0, scale = 1e-6;
  for (size_t i = 0; i < ny; i++) err = fmax(err, fabs(got[i] - want[i]));
  for (size_t i = 0; i < ny; i++) scale = fmax(scale, fabs(want[i]));
  if (err > 1e-5 * scale)
    fprintf(stderr, "%s direct forward ci %d %dx%d co %d k %d s %d p %d%s: error %.3g of %.3g\n",
            isa, p.ci, p.h, p.w, p.co, p.kh, p.sh, p.ph, planar ? " planar" : "", err, scale);
  CHECK(err <= 1e-5 * scale);
  int unused = 0, bo = host_blocks(p.co), used = p.co - 16 * (bo - 1), pixels = p.ho * p.wo;
  for (int n = 0; n < batch; n++) /* the last block's lanes past co */
    for (int q = 0; q < pixels; q++)
      for (int l = used; l < 16; l++)
        unused += yb[(((size_t)n * bo + bo - 1) * pixels + q) * 16 + l] != 0;
  CHECK_EQ_INT(unused, 0);
  free(x), free(w), free(b), free(want), free(got), free(yb), free(xb), free(ws);
}

int main(void) {
  swk_set_threads(2);
  for (int i = 0; i < HOST_ISA_COUNT; i++) {
    const char *isa = host_isas[i];
    if (!host_conv_direct_use(isa)) continue;
    test_forward(isa, shape(32, 16, 16, 32, 5, 1, 2), 2, false); /* cifar10_quick conv2 */
    test_forward(isa, shape(3, 32, 32, 32, 5, 1, 2), 2, true);   /* its first layer */
    test_forward(isa, shape(20, 12, 12, 50, 5, 1, 0), 3, false); /* LeNet conv2: partial blocks */
    test_forward(isa, shape(16, 15, 15, 48, 3, 2, 1), 2, false); /* stride 2, odd block count */
    test_forward(isa, shape(64, 7, 7, 16, 1, 1, 0), 2, false);   /* 1x1, one output block */
    test_forward(isa, shape(3, 37, 37, 64, 7, 2, 3), 1, true);   /* ResNet's first layer */
    test_forward(isa, shape(16, 9, 40, 32, 3, 1, 1), 2, false);  /* strips and a tail */
    test_forward(isa, shape(24, 6, 5, 40, 5, 1, 3), 2, false);   /* padding wider than taps */
  }
  return check_report();
}
