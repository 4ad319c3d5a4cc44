/* Kernel tests' shapes as rows: a convolution's or a pooling window's geometry in one line,
 * the output sizes derived as the compiler derives them (ir/shape.c: a convolution's floor,
 * a pooling window's Caffe ceil, less the last window if it would start in the padding). */
#ifndef SWNC_TEST_SHAPES_H
#define SWNC_TEST_SHAPES_H

#include <stdbool.h>

#include "kernels.h"

static inline int conv_out(int in, int k, int stride, int pad) {
  return (in + 2 * pad - k) / stride + 1;
}

static inline int pool_out(int in, int k, int stride, int pad) {
  int out = (in + 2 * pad - k + stride - 1) / stride + 1;
  return (out - 1) * stride >= in + pad ? out - 1 : out;
}

/* ci x h x w in, co out, a kh x kw filter at stride (sh, sw) and padding (ph, pw). */
static inline SwkConv conv_row(int ci, int h, int w, int co, int kh, int kw, int sh, int sw, int ph,
                               int pw, int groups, bool bias) {
  return (SwkConv){.ci = ci,
                   .h = h,
                   .w = w,
                   .co = co,
                   .ho = conv_out(h, kh, sh, ph),
                   .wo = conv_out(w, kw, sw, pw),
                   .kh = kh,
                   .kw = kw,
                   .sh = sh,
                   .sw = sw,
                   .ph = ph,
                   .pw = pw,
                   .dh = 1,
                   .dw = 1,
                   .groups = groups,
                   .bias = bias};
}

/* p with its taps dh rows and dw columns apart, its output sizes derived anew. */
static inline SwkConv dilated(SwkConv p, int dh, int dw) {
  p.dh = dh, p.dw = dw;
  p.ho = conv_out(p.h, dh * (p.kh - 1) + 1, p.sh, p.ph);
  p.wo = conv_out(p.w, dw * (p.kw - 1) + 1, p.sw, p.pw);
  return p;
}

/* c x h x w in, a kh x kw window at stride (sh, sw) and padding (ph, pw), max or average. */
static inline SwkPool pool_row(int c, int h, int w, int kh, int kw, int sh, int sw, int ph, int pw,
                               bool max) {
  return (SwkPool){.c = c,
                   .h = h,
                   .w = w,
                   .ho = pool_out(h, kh, sh, ph),
                   .wo = pool_out(w, kw, sw, pw),
                   .kh = kh,
                   .kw = kw,
                   .sh = sh,
                   .sw = sw,
                   .ph = ph,
                   .pw = pw,
                   .max = max};
}

/* A shape's geometry as designated initialisers of a struct whose fields have the same names
 * (a kernel set's own argument structs: sw26010's SwImplicitArgs, SwPoolArgs). */
#define CONV_GEOMETRY(s)                                                                           \
  .ci = (s).ci, .h = (s).h, .w = (s).w, .co = (s).co, .ho = (s).ho, .wo = (s).wo, .kh = (s).kh,    \
  .kw = (s).kw, .sh = (s).sh, .sw = (s).sw, .ph = (s).ph, .pw = (s).pw
#define POOL_GEOMETRY(s)                                                                           \
  .c = (s).c, .h = (s).h, .w = (s).w, .ho = (s).ho, .wo = (s).wo, .kh = (s).kh, .kw = (s).kw,      \
  .sh = (s).sh, .sw = (s).sw, .ph = (s).ph, .pw = (s).pw, .max = (s).max

/* The same with floor's sizes (a pooling layer with ceil=false). */
static inline SwkPool pool_floor_row(int c, int h, int w, int kh, int kw, int sh, int sw, int ph,
                                     int pw, bool max) {
  SwkPool p = pool_row(c, h, w, kh, kw, sh, sw, ph, pw, max);
  p.ho = conv_out(h, kh, sh, ph), p.wo = conv_out(w, kw, sw, pw);
  return p;
}

#endif
